# info, eval, attention, sample and serve on a model of every kind (tests/cli/kinds_dispatch.sh).
add_test(NAME cli.kinds_dispatch COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/kinds_dispatch.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.kinds_dispatch PROPERTIES LABELS "cli" TIMEOUT 300)
