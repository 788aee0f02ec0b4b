# The demo's fallback corpus (scripts/default-corpus.sh): built from Debian's fortunes-pl into a
# temporary directory even when ../shared/data/potop.txt exists, checked for clean UTF-8 and an
# allow-listed vocabulary, and trained on for a few steps.
add_test(NAME cli.default_corpus COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/default_corpus.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.default_corpus PROPERTIES LABELS "cli" TIMEOUT 300)
