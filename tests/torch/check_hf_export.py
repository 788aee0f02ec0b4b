"""The Hugging Face GPT-2 and Llama directories potop exports (src/models/gpt/gpt_hf_export.h,
src/models/llama/llama_hf_export.h), checked without transformers.

    /usr/bin/python3 tests/torch/check_hf_export.py <unit_tests binary>

transformers cannot be installed here, so this does what a GPT2LMHeadModel and a tokenizer would do
with the files, from their documented meaning:
  - runs `unit_tests --gtest_filter=HfExport.WritesTorchCheckFixtures` with POTOP_HF_EXPORT_FIXTURES
    set: for each case (GPTs: char, char with sinusoidal positions and no biases, byte, bpe, unigram;
    Llamas: char with a tied head, bpe with grouped-query attention and an untied head) a potop
    model directory, its export in <case>/hf and potop's ids and logits for one Polish sentence in
    <case>/potop.safetensors;
  - reads config.json and model.safetensors (plain parsing, no safetensors package) and computes
    GPT-2's forward pass in PyTorch the way modeling_gpt2 does — Conv1D as x @ W + b, pre-LN blocks,
    gelu_new, scores / sqrt(head size), the eps of config.json, lm_head tied to wte — and compares
    the logits with potop's; for a Llama, LlamaForCausalLM's the way modeling_llama does — RMSNorm
    with config.json's rms_norm_eps, rotate_half RoPE with rope_theta, grouped-query attention
    (K/V head h // (heads / kv heads) for query head h), SwiGLU (silu(gate) * up), lm_head or
    the tied embedding — read by Hugging Face's tensor names;
  - tokenizes the sentence with the exported tokenizer files (tokenizer.json's pipeline as the
    tokenizers library runs it: added tokens, byte-level pre-tokenizer, BPE merges, decoder; or
    SentencePiece's tokenizer.model through the sentencepiece module) and compares the ids with
    potop's, and decodes them back.
Without torch it prints "skip ..." and exits 77 (CTest's SKIP_RETURN_CODE); with
POTOP_STRICT_SKIPS=1 (CI) that is a failure instead.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

SKIP = 77


def need_torch(test):
    """None when torch and numpy import; else the exit code: 1 with POTOP_STRICT_SKIPS=1 (CI, where
    every test must run), SKIP otherwise, after saying why."""
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        if os.environ.get("POTOP_STRICT_SKIPS") == "1":
            print(f"FAIL: {e}: the check needs torch and numpy (scripts/setup.sh --all)", file=sys.stderr)
            return 1
        print(f"skip {test} ({e}; scripts/setup.sh --all installs torch)")
        return SKIP
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    missing = need_torch("cli.hf_export_torch")
    if missing is not None:
        return missing
    with tempfile.TemporaryDirectory(prefix="potop-hf-export.") as root:
        env = dict(os.environ, POTOP_HF_EXPORT_FIXTURES=root)
        r = subprocess.run([sys.argv[1], "--gtest_filter=HfExport.WritesTorchCheckFixtures"], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-4000:], r.stderr[-4000:], sep="\n", file=sys.stderr)
            print("FAIL: unit_tests could not write the fixtures", file=sys.stderr)
            return 1
        failures = 0
        cases = sorted(os.listdir(root))
        if len(cases) != 7:
            print(f"FAIL: expected 7 cases, got {cases}", file=sys.stderr)
            return 1
        for case in cases:
            failures += check_case(case, os.path.join(root, case))
    if failures:
        print(f"{failures} check(s) failed", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


def read_safetensors(path):
    import numpy as np
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header, data = json.loads(f.read(n)), f.read()
    meta = header.pop("__metadata__", {})
    kinds = {"F32": "<f4", "I32": "<i4", "F64": "<f8", "I64": "<i8"}
    return {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]],
                                dtype=kinds[t["dtype"]]).reshape(t["shape"])
            for name, t in header.items()}, meta


def gpt2_names(n_layer):
    names = ["transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight", "transformer.ln_f.bias"]
    for l in range(n_layer):
        for t in ["ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"]:
            names += [f"transformer.h.{l}.{t}.weight", f"transformer.h.{l}.{t}.bias"]
    return set(names)


def gpt2_logits(cfg, weights, ids):
    """GPT2LMHeadModel's logits for ids (no cache, no dropout), in float64, from config.json's fields."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    assert cfg["model_type"] == "gpt2" and cfg["architectures"] == ["GPT2LMHeadModel"], cfg
    assert cfg.get("scale_attn_weights", True) and not cfg.get("scale_attn_by_inverse_layer_idx", False)
    C, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    D, eps, T = C // H, cfg["layer_norm_epsilon"], len(ids)
    assert cfg.get("n_inner") in (None, 4 * C), cfg.get("n_inner")
    acts = {"gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
            "gelu": lambda x: 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))}
    act = acts[cfg["activation_function"]]

    def w(name):
        return torch.from_numpy(weights["transformer." + name].astype(np.float64))

    def ln(x, p):
        return F.layer_norm(x, (C,), w(p + ".weight"), w(p + ".bias"), eps)

    def conv1d(x, p):  # transformers' Conv1D: weight (in, out)
        return x @ w(p + ".weight") + w(p + ".bias")

    assert w("wte.weight").shape == (cfg["vocab_size"], C) and w("wpe.weight").shape == (cfg["n_positions"], C)
    x = w("wte.weight")[torch.tensor(ids)] + w("wpe.weight")[:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        h = f"h.{l}."
        q, k, v = (z.view(T, H, D).transpose(0, 1) for z in conv1d(ln(x, h + "ln_1"), h + "attn.c_attn").split(C, -1))
        scores = (q @ k.transpose(-1, -2) / math.sqrt(D)).masked_fill(~causal, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(0, 1).reshape(T, C)
        x = x + conv1d(y, h + "attn.c_proj")
        x = x + conv1d(act(conv1d(ln(x, h + "ln_2"), h + "mlp.c_fc")), h + "mlp.c_proj")
    x = ln(x, "ln_f")
    if "lm_head.weight" in weights:
        head = torch.from_numpy(weights["lm_head.weight"].astype(np.float64))
    else:
        assert cfg.get("tie_word_embeddings", True), "no lm_head.weight and tie_word_embeddings false"
        head = w("wte.weight")
    return (x @ head.T).numpy()


def llama_names(n_layer, tie):
    names = ["model.embed_tokens.weight", "model.norm.weight"] + ([] if tie else ["lm_head.weight"])
    for l in range(n_layer):
        for t in ["input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                  "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]:
            names.append(f"model.layers.{l}.{t}.weight")
    return set(names)


def llama_logits(cfg, weights, ids):
    """LlamaForCausalLM's logits for ids (no cache, no dropout), in float64 but for RoPE's angles,
    which Hugging Face computes in float32, from config.json's fields and the tensors' HF names."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    assert cfg["model_type"] == "llama" and cfg["architectures"] == ["LlamaForCausalLM"], cfg
    assert cfg["hidden_act"] == "silu" and not cfg["attention_bias"] and not cfg["mlp_bias"], cfg
    assert cfg.get("rope_scaling") is None and cfg.get("pretraining_tp", 1) == 1, cfg
    C, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    Hkv = cfg.get("num_key_value_heads", H)
    D = cfg.get("head_dim") or C // H
    eps, theta, T = cfg["rms_norm_eps"], cfg["rope_theta"], len(ids)

    def w(name):
        return torch.from_numpy(weights[name].astype(np.float64))

    def rms_norm(x, name):  # LlamaRMSNorm
        return w(name) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

    def linear(x, name):  # nn.Linear without bias: weight (out, in)
        return x @ w(name).T

    # LlamaRotaryEmbedding: inv_freq and the angles in float32, cos and sin of those angles.
    inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    angles = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((angles, angles), -1).double()
    cos, sin = emb.cos(), emb.sin()

    def rotate_half(x):
        return torch.cat((-x[..., D // 2:], x[..., :D // 2]), -1)

    def rope(x):  # (heads, T, D)
        return x * cos + rotate_half(x) * sin

    assert w("model.embed_tokens.weight").shape == (cfg["vocab_size"], C)
    x = w("model.embed_tokens.weight")[torch.tensor(ids)]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        p = f"model.layers.{l}."
        h = rms_norm(x, p + "input_layernorm.weight")
        q = rope(linear(h, p + "self_attn.q_proj.weight").view(T, H, D).transpose(0, 1))
        k = rope(linear(h, p + "self_attn.k_proj.weight").view(T, Hkv, D).transpose(0, 1))
        v = linear(h, p + "self_attn.v_proj.weight").view(T, Hkv, D).transpose(0, 1)
        k, v = k.repeat_interleave(H // Hkv, 0), v.repeat_interleave(H // Hkv, 0)  # repeat_kv
        scores = (q @ k.transpose(-1, -2) / math.sqrt(D)).masked_fill(~causal, float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(0, 1).reshape(T, H * D)
        x = x + linear(y, p + "self_attn.o_proj.weight")
        h = rms_norm(x, p + "post_attention_layernorm.weight")
        x = x + linear(F.silu(linear(h, p + "mlp.gate_proj.weight")) * linear(h, p + "mlp.up_proj.weight"),
                       p + "mlp.down_proj.weight")
    x = rms_norm(x, "model.norm.weight")
    if cfg["tie_word_embeddings"]:
        assert "lm_head.weight" not in weights, "tied, yet lm_head.weight is written"
        head = w("model.embed_tokens.weight")
    else:
        head = w("lm_head.weight")
    return (x @ head.T).numpy()


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: byte -> printable character."""
    printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    out, n = {}, 0
    for b in range(256):
        if b in printable:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


def bpe(word, vocab, ranks):
    """The BPE model on one pre-tokenized word: its characters, merged by rank, as ids."""
    symbols = list(word)
    while len(symbols) > 1:
        pairs = [(ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(symbols, symbols[1:]))]
        rank, i = min(pairs)
        if rank == math.inf:
            break
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
    missing = [s for s in symbols if s not in vocab]
    assert not missing, f"pieces outside the vocabulary (the tokenizers library would drop them): {missing}"
    return [vocab[s] for s in symbols]


def hf_encode(tok, text):
    """tokenizer.json's pipeline, for the parts potop's exports use."""
    assert tok["normalizer"] is None and tok["post_processor"] is None, "unexpected normalizer or post-processor"
    model = tok["model"]
    assert model["type"] == "BPE" and not model.get("byte_fallback") and model.get("continuing_subword_prefix") is None
    vocab = model["vocab"]
    ranks = {tuple(m.split(" ") if isinstance(m, str) else m): r for r, m in enumerate(model["merges"])}
    specials = {t["content"]: t["id"] for t in tok["added_tokens"]}
    # Added tokens are matched in the raw text first; the rest goes through the pipeline.
    pieces = [text]
    for s in specials:
        split = []
        for piece in pieces:
            if piece in specials:
                split.append(piece)
                continue
            for i, part in enumerate(piece.split(s)):
                split += [s, part] if i else [part]
        pieces = split
    ids = []
    for piece in pieces:
        if piece in specials:
            ids.append(specials[piece])
            continue
        if not piece:
            continue
        pre = tok["pre_tokenizer"]
        if pre is None:
            words = [piece]
        else:
            assert pre["type"] == "ByteLevel" and not pre["add_prefix_space"] and not pre.get("use_regex", True), pre
            alphabet = bytes_to_unicode()
            words = ["".join(alphabet[b] for b in piece.encode("utf-8"))]
        for word in words:
            ids += bpe(word, vocab, ranks)
    return ids


def hf_decode(tok, ids):
    inverse = {i: s for s, i in tok["model"]["vocab"].items()}
    specials = {t["id"] for t in tok["added_tokens"] if t["special"]}
    tokens = [inverse[i] for i in ids if i not in specials]  # skip_special_tokens=True
    dec = tok["decoder"]
    if dec["type"] == "Fuse":
        return "".join(tokens)
    assert dec["type"] == "ByteLevel", dec
    back = {c: b for b, c in bytes_to_unicode().items()}
    return bytes(back[c] for c in "".join(tokens)).decode("utf-8", errors="replace")


def check_case(case, path):
    import numpy as np
    failures = 0

    def check(ok, what):
        nonlocal failures
        if ok:
            print(f"ok   {case}: {what}")
        else:
            print(f"FAIL: {case}: {what}", file=sys.stderr)
            failures += 1

    hf = os.path.join(path, "hf")
    cfg = json.load(open(os.path.join(hf, "config.json"), encoding="utf-8"))
    weights, meta = read_safetensors(os.path.join(hf, "model.safetensors"))
    potop, potop_meta = read_safetensors(os.path.join(path, "potop.safetensors"))
    ids, want = [int(i) for i in potop["ids"]], potop["logits"].astype(np.float64)
    text = potop_meta["text"]
    check(meta.get("format") == "pt", "model.safetensors metadata format is pt (transformers requires it)")
    if cfg["model_type"] == "llama":
        tie = cfg["tie_word_embeddings"]
        check(set(weights) == llama_names(cfg["num_hidden_layers"], tie),
              "LlamaForCausalLM's tensor names, lm_head " + ("tied" if tie else "its own"))
        got, what = llama_logits(cfg, weights, ids), "Llama"
    else:
        check(set(weights) == gpt2_names(cfg["n_layer"]), "GPT2LMHeadModel's tensor names, lm_head tied")
        got, what = gpt2_logits(cfg, weights, ids), "GPT-2"
    check(all(t.dtype == np.float32 for t in weights.values()), "F32 tensors")

    scale = float(np.abs(want).max())
    err = float(np.abs(got - want).max())
    check(got.shape == want.shape and err <= 2e-5 * max(1.0, scale),
          f"{what} forward in torch matches potop's logits ({len(ids)} tokens, max |diff| {err:.2e}, "
          f"max |logit| {scale:.1f})")

    tj = os.path.join(hf, "tokenizer.json")
    if os.path.exists(tj):
        tok = json.load(open(tj, encoding="utf-8"))
        try:
            enc = hf_encode(tok, text)
        except AssertionError as e:
            enc = f"error: {e}"
        check(enc == ids, f"tokenizer.json encodes {text!r} to potop's {len(ids)} ids" + ("" if enc == ids else f": {enc}"))
        check(hf_decode(tok, ids) == text, "tokenizer.json decodes them back")
        vj, mt = os.path.join(hf, "vocab.json"), os.path.join(hf, "merges.txt")
        if os.path.exists(vj):
            merges = open(mt, encoding="utf-8").read().split("\n")[1:-1]
            check(json.load(open(vj, encoding="utf-8")) == tok["model"]["vocab"] and merges == tok["model"]["merges"],
                  "vocab.json and merges.txt are tokenizer.json's")
    else:
        sp_path = os.path.join(hf, "tokenizer.model")
        tc = json.load(open(os.path.join(hf, "tokenizer_config.json"), encoding="utf-8"))
        check(os.path.exists(sp_path) and not tc["add_bos_token"] and not tc["add_eos_token"],
              "tokenizer.model, adding no <bos>/<eos>")
        try:
            import sentencepiece as spm
        except ImportError:
            print(f"skip {case}: sentencepiece's Python module is not installed, tokenizer.model not run")
            return failures
        sp = spm.SentencePieceProcessor(model_file=sp_path)
        enc = sp.encode(text)
        check(enc == ids, f"sentencepiece encodes {text!r} with tokenizer.model to potop's {len(ids)} ids"
              + ("" if enc == ids else f": {enc}"))
        check(sp.decode(ids) == text, "and decodes them back")
        check(sp.piece_to_id("<bos>") == cfg["bos_token_id"] and sp.piece_to_id("<eos>") == cfg["eos_token_id"],
              "bos/eos ids of config.json are the model's")
    return failures


if __name__ == "__main__":
    sys.exit(main())
