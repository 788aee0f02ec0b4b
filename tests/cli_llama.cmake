# potop train --arch llama and the commands a Llama reaches through its tasks (tests/cli/llama.sh).
foreach(group models errors)
  add_test(NAME cli.llama.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/llama.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.llama.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
