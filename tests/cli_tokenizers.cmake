# potop tokenizer train|encode|decode|import, models trained with bpe and byte tokenizer
# directories, and the tokenizer commands' bad inputs (tests/cli/tokenizers.sh); one CTest entry
# per group.
foreach(group train models errors)
  add_test(NAME cli.tokenizers.${group}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenizers.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.tokenizers.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
# GPT-2's tokenizer (byte_bpe) against npm's gpt-3-encoder, Hugging Face's tokenizers and llama.cpp
# (tests/cli/tokenizers_gpt2.sh), a CTest entry per group; the 5.4 MB of Potop is the "long" one,
# which scripts/test.sh runs only when asked (`ctest -L long`).
foreach(group encoder hf model long)
  add_test(NAME cli.tokenizers.gpt2.${group}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenizers_gpt2.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.tokenizers.gpt2.${group} PROPERTIES LABELS "cli" TIMEOUT 600)
endforeach()
set_tests_properties(cli.tokenizers.gpt2.long PROPERTIES LABELS "cli;long")
# BERT's tokenizer (wordpiece) against npm's @huggingface/tokenizers (tests/cli/tokenizers_bert.sh);
# its 5.4 MB of Potop is the "long" entry.
foreach(group main long)
  add_test(NAME cli.tokenizers.bert.${group}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/tokenizers_bert.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.tokenizers.bert.${group} PROPERTIES LABELS "cli" TIMEOUT 600)
endforeach()
set_tests_properties(cli.tokenizers.bert.long PROPERTIES LABELS "cli;long")
# Hugging Face chat templates (potop chat-template) against npm's @huggingface/jinja on the corpus of
# tests/chat/cases (tests/cli/chat_template.sh), in two shards that run side by side.
foreach(shard 0 1)
  add_test(NAME cli.chat_template.${shard}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/chat_template.sh $<TARGET_FILE:potop> ${shard} 2
                   $<TARGET_FILE:chat_render_corpus>)
  set_tests_properties(cli.chat_template.${shard} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
