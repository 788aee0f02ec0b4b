# potop bert pretrain|fill and potop eval / attention / info of a BERT, and the bad inputs of
# those commands (tests/cli/bert.sh); one CTest entry per group.
foreach(group models errors)
  add_test(NAME cli.bert.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/bert.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.bert.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
