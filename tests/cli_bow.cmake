# potop bow train|eval|attention and their bad inputs (tests/cli/bow.sh); one CTest entry per group.
foreach(group models errors)
  add_test(NAME cli.bow.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/bow.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.bow.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
