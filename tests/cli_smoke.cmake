# End-to-end test of the potop binary: train, sample twice at temperature 0, evaluate.
add_test(NAME cli.smoke COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/smoke.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.smoke PROPERTIES LABELS "cli;quick" TIMEOUT 300)
