# potop translate end to end: a toy reversal task learned exactly, resume, bad input.
add_test(NAME cli.translate COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/translate.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.translate PROPERTIES LABELS "cli" TIMEOUT 600)
# The PyTorch reference trainer follows potop translate train step for step from the same state.
add_test(NAME cli.translate_torch COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/translate_torch.sh $<TARGET_FILE:potop>
         ${POTOP_PYTHON} ${PROJECT_SOURCE_DIR}/scripts)
# Label "retrain": left out of the sanitizer pass (docs/testing.md).
set_tests_properties(cli.translate_torch PROPERTIES LABELS "cli;retrain" TIMEOUT 300)
# potop translate pretrain (T5 span corruption) and translate train --init-from.
add_test(NAME cli.pretrain COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/pretrain.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.pretrain PROPERTIES LABELS "cli" TIMEOUT 120)
