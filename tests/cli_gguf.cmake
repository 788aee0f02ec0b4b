# potop export --format gguf, run by the real llama.cpp (node-llama-cpp pinned in tests/gguf): the
# same token ids, log-probabilities within 1e-3 and greedy continuation as potop for a char and a
# SentencePiece BPE GPT and a grouped-query char Llama (its q8_0 file's continuation too, against
# potop's q8_0 model); f16, q8_0 and q4_0 load and generate; bad inputs (tests/cli/gguf_export.sh).
# Without tests/gguf/node_modules (scripts/setup.sh --all) the llama.cpp part is skipped (exit 77).
add_test(NAME cli.gguf_export COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/gguf_export.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.gguf_export PROPERTIES LABELS "cli" TIMEOUT 600 SKIP_RETURN_CODE 77)
