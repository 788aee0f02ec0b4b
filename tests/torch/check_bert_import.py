"""potop import of Hugging Face BERT directories written here by PyTorch, checked against a BERT
forward pass written here in PyTorch that reads Hugging Face's tensor names, without transformers.

    /usr/bin/python3 tests/torch/check_bert_import.py <potop binary>

The directories are what save_pretrained writes (modeling_bert's names and shapes, random weights
spread so that each matters) with a vocab.txt whose specials sit where BERT's do ([PAD] 0,
[unusedN], [UNK], [CLS], [SEP], [MASK]) and ordinary words and ## pieces after them:
  - BertForMaskedLM, F32, "bert." names: the masked-LM head's dense + GELU + LayerNorm transform,
    cls.predictions.decoder.weight/.bias stored beside the tied embeddings and the bias, the
    position_ids buffer, exact GELU (hidden_act "gelu") and layer_norm_eps 1e-12;
  - BertModel, BF16, no prefix, two shards, old LayerNorm.gamma/beta names, the pooler, gelu_new
    and three segment rows: no head, so its fills are softmax(h · wteᵀ);
  - BertForSequenceClassification, F16, three classes whose id2label is not in sorted order: its
    pooler (tanh of a dense layer on [CLS]) and classifier, whose class probabilities
    `potop classify predict --json` must give.
`potop import` makes each a potop BERT, and `potop bert fill --json` must give, for every [MASK],
the ids and probabilities of the PyTorch forward on the stored weights (softmax over the vocabulary
but its special tokens). Then eval and attention run on the imported model, classify train --init-from fine-tunes it, and
configs potop's BERT would compute differently are refused in one line with nothing written.
Without torch it exits 77 (a skip; a failure with POTOP_STRICT_SKIPS=1).
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
WORDS = ("the a of and to in was he she it pan rzekł kmicic olenka sword horse night day came went said "
         "quick brown fox jumps over lazy dog . , ! ?").split()
PIECES = ["##s", "##ed", "##ing", "##ly", "##a", "##e"]
SPECIALS = ["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PROMPTS = ["the quick [MASK] fox jumps over the lazy dog .",
           "pan kmicic [MASK] , and oleńka [MASK] the horse !"]


def bert_state(rng, C, L, V, T, types, prefix, head):
    """BertForMaskedLM's (or BertModel's) parameters under Hugging Face's names."""
    import numpy as np
    e = prefix + "embeddings."
    s = {e + "word_embeddings.weight": rng.normal(0, 0.5, (V, C)),
         e + "position_embeddings.weight": rng.normal(0, 0.2, (T, C)),
         e + "token_type_embeddings.weight": rng.normal(0, 0.2, (types, C))}

    def layernorm(p):
        s[p + ".weight"], s[p + ".bias"] = 1 + rng.normal(0, 0.2, C), rng.normal(0, 0.1, C)

    def linear(p, n_out, n_in):
        s[p + ".weight"], s[p + ".bias"] = rng.normal(0, 1 / n_in ** 0.5, (n_out, n_in)), rng.normal(0, 0.1, n_out)

    layernorm(e + "LayerNorm")
    for l in range(L):
        p = f"{prefix}encoder.layer.{l}."
        for part in ["query", "key", "value"]:
            linear(p + "attention.self." + part, C, C)
        linear(p + "attention.output.dense", C, C)
        layernorm(p + "attention.output.LayerNorm")
        linear(p + "intermediate.dense", 4 * C, C)
        linear(p + "output.dense", C, 4 * C)
        layernorm(p + "output.LayerNorm")
    if head:
        linear("cls.predictions.transform.dense", C, C)
        layernorm("cls.predictions.transform.LayerNorm")
        s["cls.predictions.bias"] = rng.normal(0, 0.5, V)
    return {k: np.asarray(v, np.float32) for k, v in s.items()}


def bert_forward(cfg, w, ids, prefix, head, specials):
    """BERT's forward as modeling_bert computes it, read from Hugging Face's names (w: float64
    arrays of the stored values): with head "mlm" or None, the probabilities of every ordinary token
    at every position (None: softmax(h · wteᵀ), a BertModel's); with "classify", the class
    probabilities of BertForSequenceClassification (its pooler on [CLS], then classifier)."""
    import torch
    import torch.nn.functional as F
    t = {k: torch.tensor(v, dtype=torch.float64) for k, v in w.items()}
    act = {"gelu": F.gelu, "gelu_new": lambda v: F.gelu(v, approximate="tanh"), "relu": F.relu}[cfg["hidden_act"]]
    eps, H = cfg["layer_norm_eps"], cfg["num_attention_heads"]

    def ln(x, p):
        weight = t.get(p + ".weight", t.get(p + ".gamma"))
        bias = t.get(p + ".bias", t.get(p + ".beta"))
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)

    def linear(x, p):
        return x @ t[p + ".weight"].T + t[p + ".bias"]

    e = prefix + "embeddings."
    n = len(ids)
    x = t[e + "word_embeddings.weight"][ids] + t[e + "position_embeddings.weight"][:n] + \
        t[e + "token_type_embeddings.weight"][0]
    x = ln(x, e + "LayerNorm")
    C = x.shape[-1]
    D = C // H
    for l in range(cfg["num_hidden_layers"]):
        p = f"{prefix}encoder.layer.{l}."
        q, k, v = (linear(x, p + "attention.self." + part).view(n, H, D).transpose(0, 1)
                   for part in ["query", "key", "value"])
        att = torch.softmax(q @ k.transpose(-1, -2) / D ** 0.5, dim=-1)
        ctx = (att @ v).transpose(0, 1).reshape(n, C)
        x = ln(x + linear(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        x = ln(x + linear(act(linear(x, p + "intermediate.dense")), p + "output.dense"), p + "output.LayerNorm")
    if head == "classify":
        pooled = torch.tanh(linear(x[0], prefix + "pooler.dense"))
        return torch.softmax(linear(pooled, "classifier"), dim=-1).numpy()
    if head:
        x = ln(act(linear(x, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm")
        logits = x @ t[e + "word_embeddings.weight"].T + t["cls.predictions.bias"]
    else:
        logits = x @ t[e + "word_embeddings.weight"].T
    logits[:, specials] = float("-inf")
    return torch.softmax(logits, dim=-1).numpy()


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    from check_hf_export import need_torch
    missing = need_torch("cli.bert_import_torch")
    if missing is not None:
        return missing
    import numpy as np
    from check_hf_import import start_server, stored, write_tensors
    potop = sys.argv[1]
    rng = np.random.default_rng(11)
    vocab = SPECIALS + WORDS + PIECES
    V = len(vocab)
    specials = [vocab.index(s) for s in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]]
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("ok   " if ok else "FAIL: ") + what, file=sys.stdout if ok else sys.stderr)
        failures += 0 if ok else 1

    def write_dir(d, cfg, tensors, dtype, shards=1):
        os.makedirs(d)
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
        open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8").write("\n".join(vocab) + "\n")
        write_tensors(d, tensors, dtype, shards)

    def potop_run(*args):
        return subprocess.run([potop, *args], capture_output=True, text=True)

    with tempfile.TemporaryDirectory(prefix="potop-bert-import.") as root:
        C, L, T = 32, 2, 40
        mlm_cfg = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": V, "hidden_size": C,
                   "num_hidden_layers": L, "num_attention_heads": 4, "intermediate_size": 4 * C,
                   "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
                   "max_position_embeddings": T, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
                   "position_embedding_type": "absolute", "pad_token_id": 0}
        cases = []
        # 1. BertForMaskedLM, F32, with the tied decoder stored and the position_ids buffer.
        state = bert_state(rng, C, L, V, T, 2, "bert.", head=True)
        extra = {"cls.predictions.decoder.weight": state["bert.embeddings.word_embeddings.weight"],
                 "cls.predictions.decoder.bias": state["cls.predictions.bias"],
                 "bert.embeddings.position_ids": np.arange(T, dtype=np.float32)[None]}
        write_dir(os.path.join(root, "mlm", "hf"), mlm_cfg, {**state, **extra}, "F32")
        cases.append(("mlm", mlm_cfg, {k: stored(v, "F32") for k, v in state.items()}, "bert.", True))
        # 2. BertModel, BF16, two shards, LayerNorm.gamma/beta, the pooler, gelu_new, 3 segment rows.
        cfg = dict(mlm_cfg, architectures=["BertModel"], hidden_act="gelu_new", type_vocab_size=3,
                   layer_norm_eps=1e-5)
        state = bert_state(rng, C, L, V, T, 3, "", head=False)
        state = {(k[:-len(".weight")] + ".gamma" if "LayerNorm.weight" in k else
                  k[:-len(".bias")] + ".beta" if "LayerNorm.bias" in k else k): v for k, v in state.items()}
        pooler = {"pooler.dense.weight": rng.normal(0, 0.2, (C, C)).astype(np.float32),
                  "pooler.dense.bias": np.zeros(C, np.float32)}
        write_dir(os.path.join(root, "model", "hf"), cfg, {**state, **pooler}, "BF16", shards=2)
        cases.append(("model", cfg, {k: stored(v, "BF16") for k, v in state.items()}, "", False))

        for name, cfg, weights, prefix, head in cases:
            d = os.path.join(root, name)
            r = potop_run("import", os.path.join(d, "hf"), "--out", os.path.join(d, "potop"))
            check(r.returncode == 0, f"{name}: potop import ({(r.stdout + r.stderr).strip()[-300:]})")
            if r.returncode != 0:
                continue
            for prompt in PROMPTS:
                r = potop_run("bert", "fill", "-m", os.path.join(d, "potop"), "--json", "-k", "5", prompt)
                if r.returncode != 0:
                    check(False, f"{name}: potop bert fill: {r.stderr.strip()}")
                    continue
                fills = json.loads(r.stdout)
                words = prompt.split()
                # bert-base-uncased's normalizer strips accents: "oleńka" is the vocabulary's "olenka"
                ids = [vocab.index("[CLS]")] + [vocab.index(w.replace("ń", "n")) for w in words] + [vocab.index("[SEP]")]
                probs = bert_forward(cfg, weights, ids, prefix, "mlm" if head else None, specials)
                masks = [i for i, i_id in enumerate(ids) if i_id == vocab.index("[MASK]")]
                err, same = 0.0, len(fills) == len(masks)
                for fill, at in zip(fills, masks):
                    want = np.argsort(-probs[at])[:5]
                    same = same and [f["token"] for f in fill] == [int(i) for i in want]
                    err = max(err, max(abs(f["score"] - probs[at][f["token"]]) for f in fill))
                # The sequence is the prompt decoded with the fill (the other masks as [MASK]), as
                # Hugging Face's pipeline writes it: normalized, punctuation closed up.
                first = fills[0][0]
                want_text = " ".join(first["token_str"].strip() if i == masks[0] - 1 else
                                     "[MASK]" if w == "[MASK]" else w.replace("ń", "n")
                                     for i, w in enumerate(words)).replace(" .", ".").replace(" ,", ",").replace(" !", "!")
                check(first["sequence"] == want_text, f"{name}: the filled sequence {first['sequence']!r} is {want_text!r}")
                check(same and err < 2e-5, f"{name}: bert fill's top 5 and probabilities are PyTorch's for "
                      f"{prompt!r} (max |diff| {err:.1e}; first {fills[0][0]['token_str']!r} "
                      f"{fills[0][0]['score']:.4f})")
        d = os.path.join(root, "mlm", "potop")
        text = os.path.join(root, "text.txt")
        open(text, "w").write(" ".join(WORDS * 8) + "\n")
        r = potop_run("eval", "-m", d, "--data", text, "--json")
        check(r.returncode == 0 and '"masked":' in r.stdout,
              f"potop eval scores the imported BERT's masked LM ({(r.stdout + r.stderr).strip()[-200:]})")
        r = potop_run("attention", "-m", d, "-p", "the quick [MASK] fox", "--out", os.path.join(root, "att.html"))
        check(r.returncode == 0 and os.path.getsize(os.path.join(root, "att.html")) > 0,
              f"potop attention draws the imported BERT's heads ({r.stderr.strip()[-200:]})")
        r = potop_run("info", "-m", d)
        check(r.returncode == 0 and "masked-LM transform" in r.stdout, "potop info shows the masked-LM transform")
        # Quantized (q8_0: the body's, the transform's and the tied table's matrices), it fills alike.
        q = os.path.join(root, "mlm-q8_0")
        r = potop_run("quantize", "-m", d, "--type", "q8_0", "--out", q)
        fills = [potop_run("bert", "fill", "-m", m, "--json", "-k", "1", PROMPTS[0]) for m in (d, q)]
        same = r.returncode == 0 and all(f.returncode == 0 for f in fills) and \
            json.loads(fills[0].stdout)[0][0]["token"] == json.loads(fills[1].stdout)[0][0]["token"]
        check(same, f"quantize --type q8_0 keeps the imported BERT's top fill ({r.stderr.strip()[-200:]})")
        # Served: /v1/fill-mask gives what bert fill gives.
        server, url, _ = start_server(potop, d)
        try:
            body = json.dumps({"text": PROMPTS[0], "top_k": 1}).encode()
            req = urllib.request.Request(url + "/v1/fill-mask", body, {"Content-Type": "application/json"})
            got = json.loads(urllib.request.urlopen(req, timeout=60).read())["masks"][0][0]
            want = json.loads(fills[0].stdout)[0][0]
            check(got["token"] == want["token"] and abs(got["score"] - want["score"]) < 1e-6,
                  f"potop serve's /v1/fill-mask gives bert fill's answer: {got}")
        except Exception as e:  # noqa: BLE001 - any failure is the check's
            check(False, f"potop serve's /v1/fill-mask: {e}")
        finally:
            server.terminate()
            server.wait(timeout=30)
        # Fine-tuned as a classifier: rows [CLS] text [SEP] with the vocabulary's own ids, pooled at [CLS].
        tsv = os.path.join(root, "train.tsv")
        with open(tsv, "w") as f:
            for i in range(48):
                label, word = ("horse", "horse") if i % 2 else ("sword", "sword")
                f.write(f"{label}\t{' '.join(rng.choice(WORDS[:12], 4))} {word} .\n")
        out = os.path.join(root, "classifier")
        r = potop_run("classify", "train", "--init-from", d, "--data", tsv, "--dev", tsv, "--out", out, "--steps", "6",
                      "--eval-interval", "3", "--batch-size", "8", "--threads", "1")
        saved = json.load(open(os.path.join(out, "config.json"))) if r.returncode == 0 else {}
        model = saved.get("model", saved)
        check(r.returncode == 0 and model.get("cls_sep") is True and model.get("pooling") == "cls",
              f"classify train --init-from the imported BERT: [CLS] text [SEP], pooled at [CLS] "
              f"({(r.stdout + r.stderr).strip()[-300:]})")
        r = subprocess.run([potop, "classify", "predict", "-m", out], input="the horse went over the dog .\n",
                           capture_output=True, text=True)
        check(r.returncode == 0 and ("horse" in r.stdout or "sword" in r.stdout),
              f"classify predict with it: {(r.stdout + r.stderr).strip()[-200:]}")

        # BertForSequenceClassification: its pooler and classifier, classes from id2label (not sorted).
        labels = ["positive", "negative", "neutral"]
        cfg = dict(mlm_cfg, architectures=["BertForSequenceClassification"],
                   id2label={str(i): l for i, l in enumerate(labels)}, label2id={l: i for i, l in enumerate(labels)})
        state = bert_state(rng, C, L, V, T, 2, "bert.", head=False)
        state["bert.pooler.dense.weight"] = rng.normal(0, 0.3, (C, C)).astype(np.float32)
        state["bert.pooler.dense.bias"] = rng.normal(0, 0.1, C).astype(np.float32)
        state["classifier.weight"] = rng.normal(0, 0.5, (3, C)).astype(np.float32)
        state["classifier.bias"] = rng.normal(0, 0.1, 3).astype(np.float32)
        d = os.path.join(root, "classify")
        write_dir(os.path.join(d, "hf"), cfg, state, "F16")
        r = potop_run("import", os.path.join(d, "hf"), "--out", os.path.join(d, "potop"))
        check(r.returncode == 0, f"BertForSequenceClassification: potop import ({(r.stdout + r.stderr).strip()[-200:]})")
        texts = ["the quick brown fox .", "pan kmicic went over the horse !", "she said , and it was night ."]
        r = subprocess.run([potop, "classify", "predict", "-m", os.path.join(d, "potop"), "--json"],
                           input="\n".join(texts) + "\n", capture_output=True, text=True)
        weights = {k: stored(v, "F16") for k, v in state.items()}
        err, same = 1.0, False
        if r.returncode == 0:
            got = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
            err, same = 0.0, len(got) == len(texts)
            for text, g in zip(texts, got):
                ids = [vocab.index("[CLS]")] + [vocab.index(w) for w in text.split()] + [vocab.index("[SEP]")]
                want = bert_forward(cfg, weights, ids, "bert.", "classify", specials)
                same = same and g["label"] == labels[int(np.argmax(want))]
                err = max(err, max(abs(g["probabilities"][l] - want[i]) for i, l in enumerate(labels)))
        check(r.returncode == 0 and same and err < 2e-5,
              f"classify predict gives the class probabilities of PyTorch's BertForSequenceClassification "
              f"(max |diff| {err:.1e}; {(r.stdout + r.stderr).strip()[-200:]})")
        r = potop_run("info", "-m", os.path.join(d, "potop"))
        check(r.returncode == 0 and "positive, negative, neutral" in r.stdout,
              f"its classes are id2label's, in id order: {r.stdout.strip()[-200:]}")
        # Every command info lists for the imported classifier runs on it.
        r = potop_run("info", "-m", os.path.join(d, "potop"), "--json")
        listed = json.loads(r.stdout)["commands"] if r.returncode == 0 else []
        tsv = os.path.join(d, "eval.tsv")
        with open(tsv, "w") as f:
            f.write("".join(f"{l}\t{t}\n" for l, t in zip(labels, texts)))
        how = {"info": ["info"],
               "attention": ["attention", "-p", texts[0], "--out", os.path.join(d, "att.html")],
               "classify eval": ["classify", "eval", "--data", tsv],
               "classify predict": ["classify", "predict", "--input", tsv],
               "classify attention": ["classify", "attention", texts[0]],
               "quantize": ["quantize", "--type", "q8_0", "--out", os.path.join(d, "q8_0")]}
        for command in listed:
            if command == "serve":
                server = subprocess.Popen([potop, "serve", "-m", os.path.join(d, "potop"), "--port", "0"],
                                          stderr=subprocess.PIPE, text=True)
                said = ""
                for line in server.stderr:  # until it listens, or exits
                    said += line
                    if "listening on" in line:
                        break
                server.terminate()
                server.wait(timeout=30)
                check("listening on" in said, f"info lists serve, and serve takes the classifier: {said.strip()}")
                continue
            args = how.get(command)
            r = potop_run(*args[:2 if command.startswith("classify") else 1], "-m", os.path.join(d, "potop"),
                          *args[2 if command.startswith("classify") else 1:]) if args else None
            check(r is not None and r.returncode == 0,
                  f"info lists `potop {command}` for the imported classifier, and it runs: "
                  f"{(r.stdout + r.stderr).strip()[-200:] if r else 'no case for it here'}")
        check(len(listed) >= 5, f"info --json lists the classifier's commands: {listed}")
        d = os.path.join(root, "refuse-problem_type")
        write_dir(os.path.join(d, "hf"), dict(cfg, problem_type="regression"), state, "F32")
        r = potop_run("import", os.path.join(d, "hf"), "--out", os.path.join(d, "potop"))
        check(r.returncode != 0 and "problem_type" in r.stderr and not os.path.exists(os.path.join(d, "potop")),
              f"problem_type regression refused: {r.stderr.strip()}")

        # What potop's BERT would compute differently: one line naming the field, nothing written.
        state = bert_state(rng, C, L, V, T, 2, "bert.", head=True)
        for field, value in [("intermediate_size", 3 * C), ("position_embedding_type", "relative_key"),
                             ("hidden_act", "silu"), ("is_decoder", True)]:
            d = os.path.join(root, "refuse-" + field)
            write_dir(os.path.join(d, "hf"), dict(mlm_cfg, **{field: value}), state, "F32")
            r = potop_run("import", os.path.join(d, "hf"), "--out", os.path.join(d, "potop"))
            lines = r.stderr.strip().splitlines()
            check(r.returncode != 0 and len(lines) == 1 and field in lines[0] and not os.path.exists(
                os.path.join(d, "potop")), f"{field} {value!r} refused: {lines}")
        # A vocabulary without [MASK] cannot be a BERT's.
        d = os.path.join(root, "no-mask")
        write_dir(os.path.join(d, "hf"), mlm_cfg, state, "F32")
        open(os.path.join(d, "hf", "vocab.txt"), "w").write("\n".join(vocab).replace("[MASK]", "[MASQ]") + "\n")
        r = potop_run("import", os.path.join(d, "hf"), "--out", os.path.join(d, "potop"))
        check(r.returncode != 0 and "[MASK]" in r.stderr and not os.path.exists(os.path.join(d, "potop")),
              f"a vocabulary without [MASK] refused: {r.stderr.strip()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
