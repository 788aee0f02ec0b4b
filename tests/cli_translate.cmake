# potop translate end to end: a toy reversal task learned exactly, resume, bad input.
add_test(NAME cli.translate COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/translate.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.translate PROPERTIES LABELS "cli" TIMEOUT 600)
