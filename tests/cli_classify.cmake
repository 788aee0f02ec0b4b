# potop classify train|eval|predict|attention and their bad inputs (tests/cli/classify.sh); one CTest entry per group.
foreach(group models errors)
  add_test(NAME cli.classify.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/classify.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.classify.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
