# potop tokenizer train|encode|decode|import, models trained with bpe and byte tokenizer
# directories, and the tokenizer commands' bad inputs (tests/cli/tokenizers.sh); one CTest entry
# per group.
foreach(group train models errors)
  add_test(NAME cli.tokenizers.${group}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenizers.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.tokenizers.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
# GPT-2's tokenizer (byte_bpe) against npm's gpt-3-encoder (tests/cli/tokenizers_gpt2.sh).
add_test(NAME cli.tokenizers.gpt2 COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenizers_gpt2.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.tokenizers.gpt2 PROPERTIES LABELS "cli" TIMEOUT 600)
# BERT's tokenizer (wordpiece) against npm's @huggingface/tokenizers (tests/cli/tokenizers_bert.sh).
add_test(NAME cli.tokenizers.bert COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenizers_bert.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.tokenizers.bert PROPERTIES LABELS "cli" TIMEOUT 600)
# Hugging Face chat templates (potop chat-template) against npm's @huggingface/jinja on the corpus of
# tests/chat/cases (tests/cli/chat_template.sh).
add_test(NAME cli.chat_template COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/chat_template.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.chat_template PROPERTIES LABELS "cli" TIMEOUT 300)
