# potop serve end to end: a tiny model trained in the test, the server on a free port, every
# endpoint, streaming, seeds, log-probs, every error class, 503 on a full queue, cancellation
# when the client leaves, the time limit, and a clean stop on SIGTERM (tests/cli/serve.sh).
add_test(NAME cli.serve COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/serve.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.serve PROPERTIES LABELS "cli" TIMEOUT 300)
# The web studio in Debian's chromium through playwright-core (tests/browser).
add_test(NAME cli.studio_browser COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/studio_browser.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.studio_browser PROPERTIES LABELS "cli" TIMEOUT 300)
# potop serve of a BERT (fill-mask, embeddings, attention), a classifier (classify, attention) and a
# translation model (chat and completions, cross-attention): the API against the command line,
# the clients, the studio in chromium (tests/cli/serve_kinds.sh).
add_test(NAME cli.serve_kinds COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/serve_kinds.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.serve_kinds PROPERTIES LABELS "cli" TIMEOUT 300)
# potop serve safe to expose: the API key, Host and origin checks, JSON-only POSTs, chunked bodies,
# and a bounded attack with SIGTERM during it (tests/cli/serve_guard.sh).
foreach(group guard deadlines attack)
  add_test(NAME cli.serve_guard.${group} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/serve_guard.sh $<TARGET_FILE:potop> ${group})
  set_tests_properties(cli.serve_guard.${group} PROPERTIES LABELS "cli" TIMEOUT 300)
endforeach()
# The attack alone (RUN_SERIAL): its probes' p99 bound (100 ms) is the server's under attack, not
# the wait for a core that another test holds on a 2-core machine.
set_tests_properties(cli.serve_guard.attack PROPERTIES RUN_SERIAL TRUE)
# potop serve behind nginx with TLS, as docs/serve.md sets it up (tests/cli/serve_proxy.sh).
add_test(NAME cli.serve_proxy COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/serve_proxy.sh $<TARGET_FILE:potop>)
set_tests_properties(cli.serve_proxy PROPERTIES LABELS "cli" TIMEOUT 300)
