#!/usr/bin/python3
"""Checks `potop serve` of a BERT, a classifier and a translation model over HTTP, with the
standard library only.

usage: serve_kinds_api.py POTOP BERT_URL BERT_DIR CLASSIFIER_URL CLASSIFIER_DIR MT_URL MT_DIR
Each answer is compared with what the command line gives for the same model (potop bert fill
--json, potop classify predict --json, potop translate), the attention maps with the rules they
follow, and every endpoint a kind lacks or a request gets wrong with its 4xx. Prints "ok ..." per
check and exits 1 if any failed.
"""
import base64
import json
import math
import os
import struct
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

POTOP, BERT, BERT_DIR, CLS, CLS_DIR, MT, MT_DIR = sys.argv[1:8]


def request(base, path, body=None, method=None):
    """(status, parsed JSON body) of one request."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method or ("POST" if data else "GET"),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def expect_error(name, base, path, body, param, needle):
    status, answer = request(base, path, body)
    error = answer.get("error", {})
    good = status == 400 and error.get("param") == param and needle in error.get("message", "")
    check(f"{name}: 400 naming {param}", good, f"{status} {answer}")


def cli(*args, stdin=None):
    return subprocess.run([POTOP, *args], input=stdin, capture_output=True, text=True, check=True).stdout


def check_attention(name, base, text, first, last, focus):
    status, att = request(base, "/v1/attention", {"text": text})
    if status != 200:
        return check(f"{name}: attention", False, att)
    T = len(att["tokens"])
    rows = [row for layer in att["attention"] for head in layer for row in head]
    check(f"{name}: attention is bidirectional: every row has all {T} keys and sums to 1",
          att["causal"] is False and len(rows) == att["n_layer"] * att["n_head"] * T and
          all(len(r) == T and abs(sum(r) - 1) < 1e-3 for r in rows), att.get("causal"))
    check(f"{name}: tokens {first} ... {last}, focus {focus}",
          att["tokens"][0] == first and att["tokens"][-1] == last and att["focus"] == focus,
          (att["tokens"], att["focus"]))
    status, by_get = request(base, "/v1/attention?text=" + urllib.parse.quote(text))
    check(f"{name}: GET /v1/attention gives the same", status == 200 and by_get == att)


# ---------- BERT ----------
status, models = request(BERT, "/v1/models")
meta = models["data"][0]["meta"]
check("bert: /v1/models names the kind and its views",
      status == 200 and meta["kind"] == "bert" and meta["views"] == ["fill-mask", "attention"], meta)

prompt = "pan [MASK] zawołał"
status, fills = request(BERT, "/v1/fill-mask", {"text": prompt, "top_k": 4})
# The server runs with --threads 1: so does the command line, whose sums then come in the same
# order (with 2 threads the scores differ in their 11th digit).
expected = json.loads(cli("bert", "fill", "-m", BERT_DIR, "--top-k", "4", "--json", "--threads", "1", prompt))
check("fill-mask: the fills of potop bert fill --json", status == 200 and fills["masks"] == expected,
      f"{fills} against {expected}")
check("fill-mask: 4 fills, scores falling, each sequence the prompt with the fill",
      len(fills["masks"]) == 1 and len(fills["masks"][0]) == 4 and
      all(a["score"] >= b["score"] for a, b in zip(fills["masks"][0], fills["masks"][0][1:])) and
      all("[MASK]" not in f["sequence"] for f in fills["masks"][0]), fills)
status, two = request(BERT, "/v1/fill-mask", {"text": "[MASK] pan [MASK]"})
check("fill-mask: two masks, 5 fills each by default", status == 200 and [len(m) for m in two["masks"]] == [5, 5], two)

check_attention("bert", BERT, "pan [MASK] zawołał", "[CLS]", "[SEP]", 2)

texts = ["pan zagłoba zawołał", "kmicic ruszył z kopyta", "pan zagłoba zawołał"]
status, floats = request(BERT, "/v1/embeddings", {"input": texts, "model": "bert", "encoding_format": "float"})
vectors = [d["embedding"] for d in floats["data"]]
n_embd = meta["n_embd"]
check("embeddings: one unit vector of n_embd floats per text, in order",
      status == 200 and floats["object"] == "list" and [d["index"] for d in floats["data"]] == [0, 1, 2] and
      all(len(v) == n_embd and abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-5 for v in vectors), floats)
check("embeddings: the same text, the same vector; another text, another",
      vectors[0] == vectors[2] and vectors[0] != vectors[1])
status, single = request(BERT, "/v1/embeddings", {"input": texts[1]})
check("embeddings: a string alone is a list of one, computed alike", single["data"][0]["embedding"] == vectors[1])
status, b64 = request(BERT, "/v1/embeddings", {"input": texts, "encoding_format": "base64"})
decoded = [list(struct.unpack(f"<{n_embd}f", base64.b64decode(d["embedding"]))) for d in b64["data"]]
check("embeddings: base64 holds the same little-endian float32s",
      status == 200 and all(max(abs(a - b) for a, b in zip(u, v)) < 1e-6 for u, v in zip(decoded, vectors)))
check("embeddings: usage counts the tokens with [CLS] and [SEP]",
      floats["usage"]["prompt_tokens"] == floats["usage"]["total_tokens"] > 2 * len(texts), floats["usage"])

expect_error("bert completions", BERT, "/v1/completions", {"prompt": "x"}, "model", "kind 'bert'")
expect_error("bert classify", BERT, "/v1/classify", {"input": "x"}, "model", "it answers GET /v1/attention")
expect_error("fill-mask without [MASK]", BERT, "/v1/fill-mask", {"text": "pan zagłoba"}, "text", "[MASK]")
expect_error("fill-mask top_k 0", BERT, "/v1/fill-mask", {"text": "[MASK]", "top_k": 0}, "top_k", "top_k")
expect_error("fill-mask top_k 1.5", BERT, "/v1/fill-mask", {"text": "[MASK]", "top_k": 1.5}, "top_k", "top_k")
expect_error("fill-mask no text", BERT, "/v1/fill-mask", {"prompt": "[MASK]"}, "text", "text")
expect_error("fill-mask too long", BERT, "/v1/fill-mask", {"text": "[MASK] " + "pan zagłoba " * 200}, "text",
             "longer than the model's block")
expect_error("embeddings of no input", BERT, "/v1/embeddings", {"model": "bert"}, "input", "input is required")
expect_error("embeddings of []", BERT, "/v1/embeddings", {"input": []}, "input", "list of 1 to")
expect_error("embeddings of token ids", BERT, "/v1/embeddings", {"input": [[1, 2]]}, "input", "token ids")
expect_error("embeddings of an empty text", BERT, "/v1/embeddings", {"input": ["a", ""]}, "input", "input[1] is empty")
expect_error("embeddings, another format", BERT, "/v1/embeddings", {"input": "a", "encoding_format": "int8"},
             "encoding_format", "float")
expect_error("embeddings, dimensions", BERT, "/v1/embeddings", {"input": "a", "dimensions": 8}, "dimensions",
             "not supported")
expect_error("embeddings too long", BERT, "/v1/embeddings", {"input": "pan zagłoba " * 200}, "input",
             "longer than the model's block")
expect_error("attention of no text", BERT, "/v1/attention", {"input": "x"}, "text", "text")
status, answer = request(BERT, "/v1/embeddings", {"input": "x", "model": "text-embedding-3-small"})
check("embeddings naming another model: 404 model_not_found",
      status == 404 and answer["error"]["code"] == "model_not_found", answer)

# ---------- classifier ----------
status, models = request(CLS, "/v1/models")
meta = models["data"][0]["meta"]
check("classifier: /v1/models names the kind, its labels and pooling",
      status == 200 and meta["kind"] == "classifier" and meta["views"] == ["classify", "attention"] and
      sorted(meta["labels"]) == ["bad", "good"] and meta["pooling"] == "cls", meta)

texts = ["kmicic dobry pan", "zły zagłoba", "pan zagłoba zawołał dobry"]
status, labelled = request(CLS, "/v1/classify", {"input": texts})
expected = [json.loads(line) for line in cli("classify", "predict", "-m", CLS_DIR, "--json",
                                             stdin="\n".join(texts) + "\n").splitlines()]
same = status == 200 and len(labelled["data"]) == 3 and all(
    got["label"] == want["label"] and
    all(abs(got["probabilities"][k] - want["probabilities"][k]) < 1e-5 for k in want["probabilities"])
    for got, want in zip(labelled["data"], expected))
check("classify: the labels and probabilities of potop classify predict --json", same, f"{labelled} against {expected}")
status, one = request(CLS, "/v1/classify", {"input": texts[0]})
alone, first = one["data"][0], labelled["data"][0]
check("classify: a string alone is a list of one (the same label; probabilities to rounding: no padding alone)",
      status == 200 and alone["label"] == first["label"] and
      all(abs(alone["probabilities"][k] - p) < 1e-5 for k, p in first["probabilities"].items()), (one, first))

check_attention("classifier", CLS, "kmicic dobry pan", "[CLS]", "[SEP]", 0)
status, long_one = request(CLS, "/v1/attention", {"text": "pan zagłoba " * 40})
check("classifier: a text longer than the block is cut and says so",
      status == 200 and long_one["truncated"] is True and long_one["tokens"][-1] == "[SEP]", long_one.get("truncated"))

expect_error("classifier fill-mask", CLS, "/v1/fill-mask", {"text": "[MASK]"}, "model", "kind 'classifier'")
expect_error("classifier embeddings", CLS, "/v1/embeddings", {"input": "x"}, "model", "kind 'classifier'")
expect_error("classify of a number", CLS, "/v1/classify", {"input": 3}, "input", "a string or a list")
expect_error("classify of an empty text", CLS, "/v1/classify", {"input": [""]}, "input", "gives no token")
status, answer = request(CLS, "/v1/classify", None, method="POST")
check("classify without a body: 400", status == 400 and "JSON object" in answer["error"]["message"], answer)
status, health = request(CLS, "/health")
check("health of an encoder: one request at a time, none busy", status == 200 and health["slots"] == 1 and
      health["slots_busy"] == 0, health)

# ---------- translation model ----------
status, models = request(MT, "/v1/models")
meta = models["data"][0]["meta"]
check("translation: /v1/models names the kind, the languages and its views",
      status == 200 and meta["kind"] == "encoder-decoder" and (meta["source"], meta["target"]) == ("fwd", "rev") and
      meta["views"] == ["translate", "attention"], meta)
sentence = "pan zagłoba zawołał żywo"
for beam in (1, 3):
    status, r = request(MT, "/v1/completions", {"prompt": sentence, "beam": beam, "temperature": 0.7})
    expected = cli("translate", "-m", MT_DIR, "--beam", str(beam), stdin=sentence + "\n").rstrip("\n")
    check(f"translation (beam {beam}): potop translate's, in a text completion",
          status == 200 and r["object"] == "text_completion" and r["choices"][0]["text"] == expected and
          r["choices"][0]["finish_reason"] in ("stop", "length"), (r, expected))
status, plain = request(MT, "/v1/completions", {"prompt": sentence})
status, r = request(MT, "/v1/chat/completions", {"messages": [{"role": "system", "content": "translate"},
                                                              {"role": "user", "content": "kmicic"},
                                                              {"role": "assistant", "content": "x"},
                                                              {"role": "user", "content": sentence}]})
check("translation chat: the last user message translated", status == 200 and r["object"] == "chat.completion" and
      r["choices"][0]["message"]["content"] == plain["choices"][0]["text"], (r, plain))
req = urllib.request.Request(MT + "/v1/chat/completions", json.dumps(
    {"messages": [{"role": "user", "content": sentence}], "stream": True,
     "stream_options": {"include_usage": True}}).encode(), {"Content-Type": "application/json"})
events = [e[6:] for e in urllib.request.urlopen(req, timeout=60).read().decode().split("\n\n") if e]
chunks = [json.loads(e) for e in events[:-1]]
text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
check("translation chat streamed: role, the text, finish, usage, [DONE]",
      events[-1] == "[DONE]" and chunks[0]["choices"][0]["delta"]["role"] == "assistant" and
      text == plain["choices"][0]["text"] and chunks[-1]["usage"]["completion_tokens"] >= 1, events)
status, r = request(MT, "/v1/responses", {"input": [{"role": "user", "content": [{"type": "input_text", "text": sentence}]}]})
check("translation responses: the translation as output_text",
      status == 200 and r["output"][0]["content"][0]["text"] == plain["choices"][0]["text"] and r["status"] == "completed", r)
status, short = request(MT, "/v1/completions", {"prompt": sentence, "max_tokens": 1})
check("translation max_tokens: cut, finish_reason length",
      status == 200 and short["usage"]["completion_tokens"] == 1 and short["choices"][0]["finish_reason"] == "length", short)

status, att = request(MT, "/v1/attention", {"text": sentence})
rows = [row for layer in att["attention"] for head in layer for row in head]
# (a translation as long as the block is cut by one: its rows are <s> and the tokens before the last)
check("cross-attention: target rows (its own translation, then </s>) over the source's tokens and </s>",
      status == 200 and att["cross"] is True and att["queries"][-1] == "</s>" and att["tokens"][-1] == "</s>" and
      plain["choices"][0]["text"].startswith(att["translation"]) and
      len(rows) == att["n_layer"] * att["n_head"] * len(att["queries"]) and
      all(len(r) == len(att["tokens"]) and abs(sum(r) - 1) < 1e-3 for r in rows), att.get("queries"))
status, given = request(MT, "/v1/attention", {"text": sentence, "translation": "żywo zawołał"})
check("cross-attention of a given translation", status == 200 and "".join(given["queries"][:-1]).strip() and
      given["translation"] == "żywo zawołał", given.get("queries"))

expect_error("translation logprobs", MT, "/v1/completions", {"prompt": sentence, "logprobs": 1}, "logprobs", "not supported")
expect_error("translation echo", MT, "/v1/completions", {"prompt": sentence, "echo": True}, "echo", "not supported")
expect_error("translation beam 0", MT, "/v1/completions", {"prompt": sentence, "beam": 0}, "beam", "from 1")
expect_error("translation beam 17", MT, "/v1/completions", {"prompt": sentence, "beam": 17}, "beam", "to 16")
expect_error("translation too long", MT, "/v1/completions", {"prompt": "pan zagłoba " * 80}, "prompt",
             "longer than the model's block")
expect_error("translation of nothing", MT, "/v1/completions", {"prompt": ""}, "prompt", "nothing to translate")
expect_error("translation chat without a user message", MT, "/v1/chat/completions",
             {"messages": [{"role": "system", "content": "x"}]}, "messages", "last user message")
expect_error("translation embeddings", MT, "/v1/embeddings", {"input": "x"}, "model", "kind 'encoder-decoder'")

finish()
