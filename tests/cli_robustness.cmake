# Command-line tests (tests/cli/*.sh): bad inputs, signals, SIGKILL and failing writes, run
# against the real binary. Each script takes the binary's path and fails with what it expected.
# Labels: "cli" for all of them; "slow" for those that train hundreds of steps (the sanitizer
# run still includes them, see scripts/test-sanitize.sh).
set(POTOP_CLI_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cli)
foreach(group data flags model resume)
  add_test(NAME cli.bad_inputs.${group} COMMAND bash ${POTOP_CLI_DIR}/bad_inputs.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.bad_inputs.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
foreach(name nonfinite write_failure signals resume_sigkill dir_lock translate_defaults tokenizer_word2vec_errors nothing_lost)
  add_test(NAME cli.${name} COMMAND bash ${POTOP_CLI_DIR}/${name}.sh $<TARGET_FILE:potop>)
  set_tests_properties(cli.${name} PROPERTIES LABELS "cli" TIMEOUT 600)
endforeach()
set_tests_properties(cli.signals cli.resume_sigkill PROPERTIES LABELS "cli;slow")
