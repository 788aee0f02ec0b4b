# potop word2vec: training, gensim reading potop's vectors, analogy evaluation against gensim's,
# and the bad inputs (tests/cli/word2vec.sh); one CTest entry per group.
foreach(group train errors init)
  add_test(NAME cli.word2vec.${group}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/word2vec.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.word2vec.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
