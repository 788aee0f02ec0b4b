# potop quantize: f16, q8_0 and q4_0 models everywhere a model loads, and its bad input (issue 26).
add_test(NAME cli.quantize COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/quantize.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.quantize PROPERTIES LABELS "cli" TIMEOUT 300)
