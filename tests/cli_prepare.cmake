# potop prepare and training from prepared data (tests/cli/prepare.sh): prepare -> train equals
# training on the text bit for bit, resume, eval; bad inputs; and a run from a shard set larger
# than the address space the test allows the process (ulimit -v).
foreach(group train bad memory)
  add_test(NAME cli.prepare.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/prepare.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.prepare.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
