#!/usr/bin/python3
"""Checks a running `potop serve` over HTTP with the standard library only.

usage: serve_api.py BASE_URL main|timeout|batch
  main     the server runs with --slots 1 --queue 0 --max-body-kib 4 --max-tokens 1000000
  timeout  the server runs with --timeout 1
  batch    the server runs with --slots 4 --prefill-chunk 5 (continuous batching)
Prints "ok ..." per check and exits 1 if any failed.
"""
import http.client
import json
import math
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

BASE = sys.argv[1]
HOST, PORT = urllib.parse.urlparse(BASE).hostname, urllib.parse.urlparse(BASE).port


def request(method, path, body=None, raw=None, headers=None):
    """(status, headers, body bytes) of one request; raw sends bytes as they are."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers=headers or {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def complete(body):
    status, _, data = request("POST", "/v1/completions", body)
    return status, json.loads(data)


def metric(name):
    _, _, text = request("GET", "/metrics")
    for line in text.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def wait_for(condition, seconds=20):
    end = time.time() + seconds
    while time.time() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False


def stream_events(body):
    """The data fields of a streamed completion, in order."""
    status, headers, data = request("POST", "/v1/completions", dict(body, stream=True))
    assert status == 200, (status, data)
    assert headers["Content-Type"].startswith("text/event-stream"), headers["Content-Type"]
    text = data.decode()
    assert text.endswith("\n\n"), text[-50:]
    return [e[len("data: "):] for e in text.split("\n\n") if e]


def expect_error(name, status, param, needle, body=None, raw=None, method="POST", path="/v1/completions", code=None):
    got, headers, data = request(method, path, body, raw)
    try:
        err = json.loads(data)["error"]
        shaped = isinstance(err["message"], str) and isinstance(err["type"], str) and "param" in err and "code" in err
    except (ValueError, KeyError, TypeError):
        err, shaped = {}, False
    check(f"{name}: {status}", got == status and shaped and err.get("param") == param and needle in err.get("message", "")
          and (code is None or err.get("code") == code), f"got {got} {data[:300]!r}")
    return headers


def chat(body):
    status, _, data = request("POST", "/v1/chat/completions", body)
    return status, json.loads(data)


def chat_events(body):
    """The data fields of a streamed chat completion, in order."""
    status, headers, data = request("POST", "/v1/chat/completions", dict(body, stream=True))
    assert status == 200, (status, data)
    assert headers["Content-Type"].startswith("text/event-stream"), headers["Content-Type"]
    return [e[len("data: "):] for e in data.decode().split("\n\n") if e]


def main_checks():
    # --- health, models, metrics, the studio
    status, _, data = request("GET", "/health")
    check("GET /health", status == 200 and json.loads(data)["status"] == "ok", data)
    status, _, data = request("GET", "/v1/models")
    models = json.loads(data)
    check("GET /v1/models", status == 200 and models["object"] == "list" and models["data"][0]["object"] == "model"
          and models["data"][0]["meta"]["block_size"] == 32, data)
    status, headers, data = request("GET", "/")
    check("GET / is the studio", status == 200 and b"potop studio" in data and "text/html" in headers["Content-Type"])
    status, headers, data = request("GET", "/studio.js")
    check("GET /studio.js", status == 200 and b"v1/attention" in data and "javascript" in headers["Content-Type"])

    # --- a plain completion
    body = {"prompt": "pan zagłoba ", "max_tokens": 30, "temperature": 0.9, "seed": 5, "model": "model",
            "user": "unknown fields are ignored"}
    status, r = complete(body)
    choice = r["choices"][0]
    check("completion", status == 200 and r["object"] == "text_completion" and isinstance(choice["text"], str)
          and choice["finish_reason"] == "length" and choice["logprobs"] is None, r)
    check("usage counts", r["usage"] == {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}, r["usage"])
    check("the seed is reported", r["seed"] == 5, r)
    text = choice["text"]
    check("30 characters from a char model", len(text) == 30, repr(text))

    # --- the model a request names: the served one or an alias (--alias potop-demo), else 404
    status, _, data = request("GET", "/v1/models")
    ids = [m["id"] for m in json.loads(data)["data"]]
    check("/v1/models lists the model and its alias", ids == ["model", "potop-demo"], ids)
    status, _, data = request("GET", "/v1/models/potop-demo")
    check("GET /v1/models/{id}", status == 200 and json.loads(data)["id"] == "potop-demo", data)
    expect_error("GET /v1/models/{an unknown id}", 404, "model", "does not exist", method="GET", path="/v1/models/gpt-4o",
                 code="model_not_found")
    expect_error("a completion naming another model", 404, "model", "'gpt-4o' does not exist",
                 {"prompt": "pan", "model": "gpt-4o"}, code="model_not_found")
    check("a completion naming the alias", complete(dict(body, model="potop-demo"))[1]["choices"][0]["text"] == text)

    # --- seeds
    check("same seed, same text (x3)", all(complete(body)[1]["choices"][0]["text"] == text for _ in range(3)))
    other = complete(dict(body, seed=6))[1]["choices"][0]["text"]
    check("another seed, another text", other != text, repr(other))
    status, r = complete({"prompt": "pan", "max_tokens": 10})
    check("no seed: the server picks one and says which", status == 200 and isinstance(r["seed"], int))
    check("... and that seed reproduces the text",
          complete({"prompt": "pan", "max_tokens": 10, "seed": r["seed"]})[1]["choices"][0]["text"] == r["choices"][0]["text"])
    seeds = [complete({"prompt": "pan", "max_tokens": 1})[1]["seed"] for _ in range(20)]
    check("random seeds are JavaScript-safe integers (<= 2^53 - 1)", all(0 <= x <= 2**53 - 1 for x in seeds), seeds)
    status, r = complete({"prompt": "pan", "max_tokens": 10, "seed": -1})
    check("seed -1: a random seed, reported", status == 200 and 0 <= r["seed"] <= 2**53 - 1 and r["seed"] not in seeds, r)
    check("seed 2^53 - 1 is taken", complete({"prompt": "pan", "max_tokens": 1, "seed": 2**53 - 1})[1]["seed"] == 2**53 - 1)
    expect_error("seed 2^53", 400, "seed", "between -1 and 9007199254740991", {"prompt": "pan", "seed": 2**53})
    check("n_predict is max_tokens", len(complete({"prompt": "pan", "n_predict": 7, "seed": 1})[1]["choices"][0]["text"]) == 7)
    greedy = [complete({"prompt": "pan", "max_tokens": 20, "temperature": 0, "seed": s})[1]["choices"][0]["text"] for s in (1, 2)]
    check("temperature 0 ignores the seed", greedy[0] == greedy[1], greedy)

    # --- streaming: one event per token, finish_reason on the last, then [DONE]; same text
    events = stream_events(body)
    check("stream ends with [DONE]", events[-1] == "[DONE]", events[-3:])
    chunks = [json.loads(e) for e in events[:-1]]
    check("stream: one chunk per token and a last one", len(chunks) == 31, len(chunks))
    check("stream: finish_reason only on the last",
          all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1]) and chunks[-1]["choices"][0]["finish_reason"] == "length")
    check("stream: usage on the last", chunks[-1].get("usage", {}).get("completion_tokens") == 30)
    check("stream: same text as without", "".join(c["choices"][0]["text"] for c in chunks) == text)
    check("stream: every chunk carries the seed", all(c["seed"] == 5 for c in chunks), chunks[0])

    # --- stop strings: the text ends before the first stop; streaming holds back their prefixes
    stop = text[8:10]
    status, r = complete(dict(body, stop=[stop, "never-there"]))
    cut = text[:text.find(stop)]
    check("stop: text ends before it, finish_reason stop",
          r["choices"][0]["text"] == cut and r["choices"][0]["finish_reason"] == "stop", (r["choices"][0], cut))
    chunks = [json.loads(e) for e in stream_events(dict(body, stop=stop))[:-1]]
    streamed = [c["choices"][0]["text"] for c in chunks]
    check("stop while streaming: same text, the stop never shown", "".join(streamed) == cut, (streamed, cut))
    check("stop while streaming: finish_reason stop", chunks[-1]["choices"][0]["finish_reason"] == "stop")

    # --- log-probs in the legacy shape
    status, r = complete(dict(body, logprobs=3))
    lp = r["choices"][0]["logprobs"]
    check("logprobs: legacy shape", set(lp) == {"tokens", "token_logprobs", "top_logprobs", "text_offset"}
          and len(lp["tokens"]) == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"]) == 30, lp)
    check("logprobs: tokens spell the text", "".join(lp["tokens"]) == text)
    check("logprobs: offsets count characters from the prompt's start",
          lp["text_offset"] == list(range(12, 42)), lp["text_offset"])
    check("logprobs: <= 0, at most 3 alternatives each, the likeliest >= the chosen",
          all(l <= 0 and 1 <= len(t) <= 3 and max(t.values()) >= l - 1e-6
              for l, t in zip(lp["token_logprobs"], lp["top_logprobs"])))
    check("logprobs: top_logprobs likeliest first (as sent, not by key)",
          all(list(t.values()) == sorted(t.values(), reverse=True) for t in lp["top_logprobs"]), lp["top_logprobs"][:3])
    status, r = complete(dict(body, logprobs=1, stop=[stop]))
    lp = r["choices"][0]["logprobs"]
    check("logprobs with a stop string: the tokens spell the text returned, not the stop",
          "".join(lp["tokens"]) == r["choices"][0]["text"] == cut and len(lp["tokens"]) == len(lp["token_logprobs"]),
          (lp["tokens"], cut))
    chunks = [json.loads(e) for e in stream_events(dict(body, logprobs=1, stop=[stop]))[:-1]]
    streamed = "".join(t for c in chunks if c["choices"][0]["logprobs"] for t in c["choices"][0]["logprobs"]["tokens"])
    check("logprobs with a stop string, streamed: the same", streamed == cut, (streamed, cut))
    chunks = [json.loads(e) for e in stream_events(dict(body, logprobs=2))[:-1]]
    check("logprobs while streaming: one token each", all(len(c["choices"][0]["logprobs"]["tokens"]) == 1 for c in chunks[:-1]))

    # --- echo: the prompt with its log-probs (scoring a text)
    status, r = complete({"prompt": "pan zagłoba", "max_tokens": 0, "echo": True, "logprobs": 1})
    lp = r["choices"][0]["logprobs"]
    check("echo: the prompt's text", status == 200 and r["choices"][0]["text"] == "pan zagłoba", r)
    check("echo: a log-prob per prompt token, none for the first",
          lp["tokens"] == list("pan zagłoba") and lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
          and all(isinstance(x, float) and x <= 0 for x in lp["token_logprobs"][1:]), lp)
    check("echo: offsets", lp["text_offset"] == list(range(11)), lp["text_offset"])
    long_prompt = ("pan zagłoba zawołał " * 4)[:70]  # longer than the context (32)
    status, r = complete({"prompt": long_prompt, "max_tokens": 0, "echo": True, "logprobs": 1})
    lp = r["choices"][0]["logprobs"]
    check("echo scores a text longer than the context (a sliding window): every token",
          status == 200 and len(lp["tokens"]) == 70 and lp["token_logprobs"][0] is None and
          all(x <= 0 for x in lp["token_logprobs"][1:]) and lp["text_offset"] == list(range(70)), r)
    status, r = complete({"prompt": "pan", "max_tokens": 5, "echo": True, "seed": 3})
    check("echo without logprobs: prompt + completion", r["choices"][0]["text"].startswith("pan")
          and len(r["choices"][0]["text"]) == 8)

    # --- attention weights
    status, _, data = request("GET", "/v1/attention?" + urllib.parse.urlencode({"text": "pan zagłoba"}))
    a = json.loads(data)
    T = len("pan zagłoba")
    check("attention: tokens and shape layers x heads x T x (i+1)", status == 200 and a["tokens"] == list("pan zagłoba")
          and len(a["attention"]) == 2 and all(len(h) == 2 for h in a["attention"])
          and all(len(h[i]) == i + 1 for layer in a["attention"] for h in layer for i in range(T)), data[:200])
    check("attention: rows sum to 1", all(abs(sum(row) - 1) < 1e-3 for layer in a["attention"] for h in layer for row in h))
    status, _, data = request("POST", "/v1/attention", {"text": "pan"})
    check("attention by POST", status == 200 and len(json.loads(data)["tokens"]) == 3)
    expect_error("attention: no text", 400, "text", "required", method="GET", path="/v1/attention")
    # Longer than the context (32): read through generation's sliding window, [0, 32) then [16, 48).
    long_text = ("pan zagłoba " * 5)[:45]
    status, _, data = request("POST", "/v1/attention", {"text": long_text})
    a = json.loads(data)
    rows = [h for layer in a["attention"] for h in layer]
    check("attention of a text longer than the context: every row, each summing to 1",
          status == 200 and a["window"] == 32 and len(a["tokens"]) == 45 and
          all(len(h[i]) == i + 1 and abs(sum(h[i]) - 1) < 1e-3 for h in rows for i in range(45)), data[:200])
    check("... rows past the first window see only theirs (no weight before position 16)",
          all(all(w == 0 for w in h[i][:16]) for h in rows for i in range(32, 45)) and
          any(w > 0 for h in rows for w in h[31][:16]))
    expect_error("attention: text longer than --max-attention-tokens", 400, "text", "1 to 256", method="GET",
                 path="/v1/attention?text=" + "a" * 300)
    expect_error("attention: unencodable text", 400, "text", "Ж", method="GET", path="/v1/attention?text=" + urllib.parse.quote("Ж"))

    # --- every error class: 4xx with {"error": {message, type, param}}
    expect_error("malformed JSON", 400, None, "not valid JSON", raw=b'{"prompt": "pan",')
    expect_error("a JSON array body", 400, None, "JSON object", raw=b'[1]')
    expect_error("no prompt", 400, "prompt", "required", {"max_tokens": 3})
    expect_error("prompt of the wrong type", 400, "prompt", "must be a string", {"prompt": 3})
    expect_error("max_tokens of the wrong type", 400, "max_tokens", "integer", {"prompt": "pan", "max_tokens": "3"})
    expect_error("stream of the wrong type", 400, "stream", "true or false", {"prompt": "pan", "stream": "yes"})
    expect_error("temperature out of range", 400, "temperature", ">= 0", {"prompt": "pan", "temperature": -1})
    expect_error("top_p out of range", 400, "top_p", "(0, 1]", {"prompt": "pan", "top_p": 2})
    expect_error("logprobs out of range", 400, "logprobs", "between 0 and 20", {"prompt": "pan", "logprobs": 50})
    expect_error("max_tokens above the limit", 400, "max_tokens", "between 0 and 1000000", {"prompt": "pan", "max_tokens": 10**7})
    expect_error("unencodable prompt", 400, "prompt", "Ж", {"prompt": "pan Ж"})
    expect_error("invalid UTF-8", 400, None, "UTF-8", raw=b'{"prompt": "pan \xff"}')
    expect_error("n > 1 refused", 400, "n", "must be 1", {"prompt": "pan", "n": 2})
    expect_error("a number beyond double's range", 400, None, "not valid JSON", raw=b'{"prompt": "pan", "top_p": 1e400}')
    expect_error("... in a chat", 400, None, "not valid JSON", raw=b'{"messages": [], "seed": -1e999}',
                 path="/v1/chat/completions")
    expect_error("... in an attention request", 400, None, "JSON object", raw=b'{"text": "pan", "x": 1e400}',
                 path="/v1/attention")
    headers = expect_error("GET of a POST endpoint", 405, None, "takes POST", method="GET", code="method_not_allowed")
    check("405 says what is allowed", headers and headers.get("Allow") == "POST", headers and headers.get("Allow"))
    expect_error("DELETE /v1/models", 405, None, "takes GET", method="DELETE", path="/v1/models", code="method_not_allowed")
    expect_error("POST /health", 405, None, "takes GET", {}, path="/health", code="method_not_allowed")
    expect_error("body over --max-body-kib", 413, None, "too large", raw=json.dumps({"prompt": "a" * 8000}).encode())
    expect_error("unknown endpoint", 404, None, "no such", method="GET", path="/v1/nothing")
    expect_error("unknown page", 404, None, "no such", method="GET", path="/nothing.html")
    status, _, _ = request("GET", "/health")
    check("still healthy after every error", status == 200)

    chat_checks(text)

    # --- a full queue (1 slot, no queue): 503 with Retry-After; a client that leaves cancels
    cancelled0 = metric("potop_generations_cancelled_total")
    conn = http.client.HTTPConnection(HOST, PORT, timeout=30)
    conn.request("POST", "/v1/completions", json.dumps({"prompt": "pan", "max_tokens": 900000, "stream": True}),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = resp.readline()
    check("long stream started", resp.status == 200 and first.startswith(b"data: "), first)
    check("busy slot shows in /metrics", wait_for(lambda: metric("potop_slots_busy") == 1))
    got, headers, data = request("POST", "/v1/completions", {"prompt": "pan", "max_tokens": 3})
    check("503 while the only slot is busy", got == 503 and headers.get("Retry-After") == "1"
          and json.loads(data)["error"]["type"] == "server_busy", (got, data))
    got, _, _ = request("GET", "/health")
    check("/health answers while busy", got == 200)
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    check("stream: the client leaving cancels the generation",
          wait_for(lambda: metric("potop_generations_cancelled_total") == cancelled0 + 1 and metric("potop_slots_busy") == 0),
          metric("potop_generations_cancelled_total"))

    # the same without streaming: the client leaves while the answer is being generated
    conn = http.client.HTTPConnection(HOST, PORT, timeout=30)
    conn.request("POST", "/v1/completions", json.dumps({"prompt": "pan", "max_tokens": 900000}),
                 {"Content-Type": "application/json"})
    check("long plain completion started", wait_for(lambda: metric("potop_slots_busy") == 1))
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    check("plain: the client leaving cancels the generation",
          wait_for(lambda: metric("potop_generations_cancelled_total") == cancelled0 + 2 and metric("potop_slots_busy") == 0),
          metric("potop_generations_cancelled_total"))
    status, r = complete({"prompt": "pan", "max_tokens": 5, "seed": 1})
    check("served again once the slot is free", status == 200)

    # --- metrics
    _, headers, data = request("GET", "/metrics")
    text = data.decode()
    check("metrics: Prometheus text", headers["Content-Type"].startswith("text/plain") and "# TYPE potop_generated_tokens_total counter" in text)
    for name in ("potop_requests_total{path=\"/v1/completions\",code=\"200\"}", "potop_requests_total{path=\"/v1/completions\",code=\"400\"}",
                 "potop_requests_total{path=\"/v1/completions\",code=\"503\"}",
                 "potop_requests_total{path=\"/v1/chat/completions\",code=\"200\"}", "potop_tokens_per_second",
                 "potop_queue_length", "potop_prompt_tokens_total"):
        check(f"metrics: {name}", name in text)
    check("metrics: tokens counted", metric("potop_generated_tokens_total") > 300)


def chat_checks(text):
    """/v1/chat/completions: the plain template makes "pan zagłoba " a prompt of "pan zagłoba \\n"."""
    messages = [{"role": "user", "content": "pan zagłoba "}]
    body = {"messages": messages, "max_completion_tokens": 30, "temperature": 0.9, "seed": 5, "model": "model"}
    status, r = chat(body)
    choice = r["choices"][0]
    plain = complete({"prompt": "pan zagłoba \n", "max_tokens": 30, "temperature": 0.9, "seed": 5})[1]
    check("chat: chat.completion, the assistant's message", status == 200 and r["object"] == "chat.completion"
          and r["id"].startswith("chatcmpl-") and choice["message"]["role"] == "assistant"
          and choice["finish_reason"] == "length" and choice["logprobs"] is None and r["seed"] == 5, r)
    check("chat: the plain template's prompt continued, as /v1/completions does",
          choice["message"]["content"] == plain["choices"][0]["text"], (choice["message"], plain["choices"][0]["text"]))
    check("chat: usage", r["usage"] == {"prompt_tokens": 13, "completion_tokens": 30, "total_tokens": 43}, r["usage"])
    conversation = [{"role": "system", "content": "litwo"}, {"role": "user", "content": [{"type": "text", "text": "pan"}]},
                    {"role": "assistant", "content": "zagłoba"}, {"role": "user", "content": "kmicic"}]
    status, r = chat(dict(body, messages=conversation))
    plain = complete({"prompt": "litwo\n\npan\nzagłoba\nkmicic\n", "max_tokens": 30, "temperature": 0.9, "seed": 5})[1]
    check("chat: system, user (text parts), assistant and user rendered in order",
          status == 200 and r["choices"][0]["message"]["content"] == plain["choices"][0]["text"], r)
    check("chat: max_tokens works as max_completion_tokens",
          chat({"messages": messages, "max_tokens": 7, "seed": 1})[1]["usage"]["completion_tokens"] == 7)

    events = chat_events(dict(body, stream_options={"include_usage": True}))
    chunks = [json.loads(e) for e in events[:-1]]
    check("chat stream: ends with [DONE]", events[-1] == "[DONE]", events[-2:])
    check("chat stream: chat.completion.chunk, each with the seed",
          all(c["object"] == "chat.completion.chunk" and c["seed"] == 5 for c in chunks), chunks[0])
    check("chat stream: the role first", chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}, chunks[0])
    deltas = [c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]]
    check("chat stream: the same text as without", "".join(deltas) == choice["message"]["content"], deltas)
    check("chat stream: finish_reason on the last choice, then the usage with no choices",
          chunks[-2]["choices"][0]["finish_reason"] == "length" and chunks[-1]["choices"] == []
          and chunks[-1]["usage"]["completion_tokens"] == 30, chunks[-2:])
    chunks = [json.loads(e) for e in chat_events(body)[:-1]]
    check("chat stream without include_usage: no usage chunk", all(c["choices"] for c in chunks) and
          all("usage" not in c for c in chunks), chunks[-1])

    status, r = chat(dict(body, logprobs=True, top_logprobs=2))
    content = r["choices"][0]["logprobs"]["content"]
    check("chat logprobs: one entry per token, with bytes and 2 alternatives likeliest first",
          len(content) == 30 and "".join(c["token"] for c in content) == r["choices"][0]["message"]["content"]
          and all(bytes(c["bytes"]).decode() == c["token"] and len(c["top_logprobs"]) == 2
                  and c["top_logprobs"][0]["logprob"] >= c["top_logprobs"][1]["logprob"] for c in content), content[:2])
    status, r = chat(dict(body, logprobs=True))
    check("chat logprobs: no alternatives without top_logprobs",
          all(c["top_logprobs"] == [] for c in r["choices"][0]["logprobs"]["content"]))

    # --- /v1/responses: the same conversation in OpenAI's Responses API
    status, _, data = request("POST", "/v1/responses", {"input": "pan zagłoba ", "max_output_tokens": 30,
                                                        "temperature": 0.9, "seed": 5, "store": False})
    r = json.loads(data)
    out = r["output"][0]
    check("responses: a response with the chat's text, incomplete at max_output_tokens",
          status == 200 and r["object"] == "response" and r["id"].startswith("resp_") and out["type"] == "message"
          and out["role"] == "assistant" and out["content"][0]["type"] == "output_text"
          and out["content"][0]["text"] == choice["message"]["content"] and r["status"] == "incomplete"
          and r["incomplete_details"] == {"reason": "max_output_tokens"}
          and r["usage"] == {"input_tokens": 13, "output_tokens": 30, "total_tokens": 43}, r)
    status, _, data = request("POST", "/v1/responses", {
        "instructions": "litwo", "max_output_tokens": 30, "temperature": 0.9, "seed": 5,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "pan"}]},
                  {"role": "assistant", "content": [{"type": "output_text", "text": "zagłoba"}]},
                  {"type": "message", "role": "user", "content": "kmicic"}]})
    plain = complete({"prompt": "litwo\n\npan\nzagłoba\nkmicic\n", "max_tokens": 30, "temperature": 0.9, "seed": 5})[1]
    check("responses: instructions and input messages rendered as the chat's",
          status == 200 and json.loads(data)["output"][0]["content"][0]["text"] == plain["choices"][0]["text"], data[:300])
    status, headers, data = request("POST", "/v1/responses", {"input": "pan zagłoba ", "max_output_tokens": 30,
                                                              "temperature": 0.9, "seed": 5, "stream": True})
    events = [e for e in data.decode().split("\n\n") if e]
    types = [e.split("\n")[0][len("event: "):] for e in events]
    bodies = [json.loads(e.split("\n")[1][len("data: "):]) for e in events]
    deltas = "".join(b["delta"] for b in bodies if b["type"] == "response.output_text.delta")
    check("responses streamed: typed events in order, numbered, the deltas spell the text",
          types[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                        "response.content_part.added"]
          and types[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                             "response.incomplete"]
          and all(b["type"] == t for b, t in zip(bodies, types))
          and [b["sequence_number"] for b in bodies] == list(range(len(bodies)))
          and deltas == choice["message"]["content"] and bodies[-1]["response"]["usage"]["output_tokens"] == 30,
          types)
    status, r = chat(dict(body, logprobs=True, top_logprobs=2))
    chat_content = r["choices"][0]["logprobs"]["content"]
    status, _, data = request("POST", "/v1/responses", {"input": "pan zagłoba ", "max_output_tokens": 30,
                                                        "temperature": 0.9, "seed": 5, "top_logprobs": 2,
                                                        "include": ["message.output_text.logprobs"]})
    part = json.loads(data)["output"][0]["content"][0]
    check("responses: include message.output_text.logprobs gives the chat's log-probs on the output_text part",
          status == 200 and part["text"] == choice["message"]["content"] and part["logprobs"] == chat_content,
          str(part)[:300])
    status, _, data = request("POST", "/v1/responses", {"input": "pan zagłoba ", "max_output_tokens": 30,
                                                        "temperature": 0.9, "seed": 5, "stream": True,
                                                        "include": ["message.output_text.logprobs"]})
    streamed = [json.loads(e.split("\n")[1][len("data: "):]) for e in data.decode().split("\n\n") if e]
    streamed = [lp for b in streamed if b["type"] == "response.output_text.delta" for lp in b["logprobs"]]
    check("responses streamed with include: each delta carries its tokens' log-probs",
          [c["token"] for c in streamed] == [c["token"] for c in chat_content]
          and all(abs(a["logprob"] - b["logprob"]) < 1e-5 for a, b in zip(streamed, chat_content)), streamed[:2])
    expect_error("responses: an include it does not serve", 400, "include", "is not supported",
                 {"input": "pan", "include": ["reasoning.encrypted_content"]}, path="/v1/responses")
    expect_error("responses: no input", 400, "input", "input is required", {"max_output_tokens": 3}, path="/v1/responses")
    expect_error("responses: a function call item", 400, "input", "must be a message",
                 {"input": [{"type": "function_call", "name": "f"}]}, path="/v1/responses")
    expect_error("responses: an image part", 400, "input", "only input_text and output_text",
                 {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]}, path="/v1/responses")
    expect_error("responses: tools", 400, "tools", "not supported", {"input": "pan", "tools": [{"type": "function"}]},
                 path="/v1/responses")
    expect_error("responses: max_output_tokens too large", 400, "max_output_tokens", "max_output_tokens must be between",
                 {"input": "pan", "max_output_tokens": 10**8}, path="/v1/responses")

    def chat_error(name, param, needle, payload, status=400):
        expect_error(name, status, param, needle, payload, path="/v1/chat/completions")
    chat_error("chat: no messages", "messages", "required", {"max_tokens": 3})
    chat_error("chat: empty messages", "messages", "non-empty array", {"messages": []})
    chat_error("chat: a tool message", "messages", "role 'tool' is not supported", {"messages": [{"role": "tool", "content": "x"}]})
    chat_error("chat: an image part", "messages", "only text parts",
               {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})
    chat_error("chat: tools", "tools", "not supported", {"messages": messages, "tools": [{"type": "function"}]})
    chat_error("chat: JSON mode", "response_format", "not supported", {"messages": messages, "response_format": {"type": "json_object"}})
    chat_error("chat: top_logprobs without logprobs", "top_logprobs", "logprobs: true", {"messages": messages, "top_logprobs": 2})
    chat_error("chat: top_logprobs too many", "top_logprobs", "top_logprobs must be between 0 and 20",
               {"messages": messages, "logprobs": True, "top_logprobs": 50})
    chat_error("chat: stream_options without stream", "stream_options", "stream: true",
               {"messages": messages, "stream_options": {"include_usage": True}})
    chat_error("chat: max_completion_tokens too large", "max_completion_tokens", "max_completion_tokens must be between",
               {"messages": messages, "max_completion_tokens": 10**8})
    chat_error("chat: a character the model lacks", "prompt", "Ж", {"messages": [{"role": "user", "content": "Ж"}]})
    chat_error("chat: another model", "model", "does not exist", {"messages": messages, "model": "gpt-4o"}, status=404)


def timeout_checks():
    start = time.time()
    status, r = complete({"prompt": "pan", "max_tokens": 900000})
    took = time.time() - start
    check("time limit: the generation ends with what it has", status == 200 and r["choices"][0]["finish_reason"] == "time_limit"
          and 0 < r["usage"]["completion_tokens"] < 900000 and took < 30, (status, took))
    check("time limit: counted", metric("potop_generations_timed_out_total") == 1)


def batch_checks():
    import threading
    seeded = {"prompt": "pan zagłoba rzekł ", "max_tokens": 60, "temperature": 0.9, "seed": 7, "logprobs": 2}
    status, alone = complete(seeded)
    check("batch: a seeded request alone", status == 200 and alone["usage"]["completion_tokens"] == 60, alone)
    # The same request alongside three others in the batch, of other lengths and options, with
    # long prompts read in chunks of 5 between decoding steps.
    others = [{"prompt": "a" * 40, "max_tokens": 80, "seed": 1},
              {"prompt": "kmicic ", "max_tokens": 45, "temperature": 0, "stream": True},
              {"prompt": "", "max_tokens": 70, "seed": 3, "stop": ["x"]}]
    results = [None] * 4

    def run(k, body):
        results[k] = request("POST", "/v1/completions", body) if body.get("stream") else complete(body)

    threads = [threading.Thread(target=run, args=(k, b)) for k, b in enumerate([seeded] + others)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status, together = results[0]
    check("batch: the same text alongside three others", status == 200 and
          together["choices"][0]["text"] == alone["choices"][0]["text"], (together, alone))
    a, b = alone["choices"][0]["logprobs"]["token_logprobs"], together["choices"][0]["logprobs"]["token_logprobs"]
    check("batch: the same log-probs (to float rounding)", len(a) == len(b) and
          all(abs(x - y) < 1e-4 for x, y in zip(a, b)), (a, b))
    check("batch: the others answered", all(r[0] == 200 for r in results[1:]), [r[0] for r in results])
    check("batch: every generation left the batch", wait_for(lambda: json.loads(request("GET", "/health")[2])["slots_busy"] == 0))


{"main": main_checks, "timeout": timeout_checks, "batch": batch_checks}[sys.argv[2]]()
finish()
