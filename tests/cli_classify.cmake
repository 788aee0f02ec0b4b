# potop classify train|eval|predict|attention and their bad inputs (tests/cli/classify.sh); one
# CTest entry per group; with MPI, 2 ranks against one process with --grad-accum 2.
foreach(group models errors)
  add_test(NAME cli.classify.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/classify.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.classify.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
if(POTOP_MPI)
  add_test(NAME cli.classify.mpi
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/classify.sh $<TARGET_FILE:potop> mpi ${MPIEXEC_EXECUTABLE})
  set_tests_properties(cli.classify.mpi PROPERTIES LABELS "cli;mpi;retrain" TIMEOUT 300)
endif()
