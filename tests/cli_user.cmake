# What a new user hits (tests/cli/user_pass.sh): data loss, the right checkpoint, the CLI's
# conventions; one CTest entry per group.
foreach(group training checkpoints sampling commands defaults)
  add_test(NAME cli.user.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/user_pass.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.user.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
# README's examples, as written, against a model like the one scripts/demo.sh trains.
add_test(NAME cli.readme_examples COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/readme_examples.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.readme_examples PROPERTIES LABELS "cli" TIMEOUT 300)
# Fine-tuning (--init-from) and a given tokenizer (--tokenizer).
add_test(NAME cli.finetune COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/finetune.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.finetune PROPERTIES LABELS "cli" TIMEOUT 300)
