# The trainers behave alike (tests/cli/drift.sh, issue 25): --resume below the checkpoint's step
# refused, --resume with more steps keeps the cosine decay, --force removes old snapshots, a run
# stopped and resumed ends bit for bit as the uninterrupted one, and
# info / eval / sample know every model kind. One CTest entry per group.
foreach(group resume_below schedule force resume_exact kinds)
  add_test(NAME cli.drift.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/drift.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.drift.${group} PROPERTIES LABELS "cli" TIMEOUT 180)
endforeach()
