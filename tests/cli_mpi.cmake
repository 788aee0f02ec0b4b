# Multi-process training (tests/cli/mpi.sh, docs/distributed.md): only when potop is built with
# MPI. 2 ranks equal 1 process with --grad-accum 2; resume at the same and another rank count;
# ranks that disagree are refused; a killed rank ends the run with the checkpoint loadable, and so
# does a stopped one (--mpi-timeout); the overlapped exchange is bit-identical to the blocking one;
# potop bow train, potop translate train, potop bert pretrain and potop classify train equal one
# process with --grad-accum 2 too.
if(POTOP_MPI)
  foreach(group equal resume refuse kill hang overlap llama_equal bow_equal translate_equal bert_equal classify_equal)
    add_test(NAME cli.mpi.${group}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/mpi.sh $<TARGET_FILE:potop> ${MPIEXEC_EXECUTABLE} ${group})
    set_tests_properties(cli.mpi.${group} PROPERTIES LABELS "cli;mpi" TIMEOUT 300)
  endforeach()
  # Label "retrain": each trainer's 2-rank run against its --grad-accum 2 run, numbers compared.
  # scripts/test-sanitize.sh leaves these out: cli.mpi.equal keeps the MPI exchange under the
  # sanitizers, and each trainer's own CLI test keeps its code there (docs/testing.md).
  foreach(group llama_equal bow_equal translate_equal bert_equal classify_equal)
    set_tests_properties(cli.mpi.${group} PROPERTIES LABELS "cli;mpi;retrain")
  endforeach()
endif()
