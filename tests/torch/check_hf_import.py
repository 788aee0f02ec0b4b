"""potop import (src/checkpoint/hf_import.h) of Hugging Face directories written here by PyTorch,
checked against PyTorch's forward pass on the same weights, without transformers.

    /usr/bin/python3 tests/torch/check_hf_import.py <potop binary> <unit_tests binary>

Each case is a directory as transformers' save_pretrained or the hub lays it out, with random
weights under Hugging Face's tensor names and shapes (modeling_gpt2, modeling_llama), a config.json
and GPT-2-style vocab.json + merges.txt (a byte-level BPE learned here on a short text):
  - GPT2LMHeadModel, F32, "transformer." names, with the causal-mask buffers older files hold;
  - GPT2Model, F16, no prefix, sharded over two files by model.safetensors.index.json;
  - GPT2LMHeadModel, BF16, with lm_head.weight stored beside the tied wte, the exact GELU
    (activation_function "gelu") and layer_norm_epsilon 1e-3;
  - LlamaForCausalLM, F32, grouped-query attention (4 heads, 2 K/V heads), untied head;
  - LlamaForCausalLM, BF16, SmolLM2's pattern (3 heads sharing 1 K/V head, tied head,
    rope_theta 100000), sharded, with rotary inv_freq buffers.
and two GGUF files written as llama.cpp's converter lays them out (gguf_files.py), from the weights
of the first and the fourth: GPT-2 with q8_0 matrices, an f16 token_embd and an output.weight
beside it, alignment 64; the Llama with permuted q4_0 attn_q/attn_k, q4_0 matrices, a q8_0 output
and a bf16 token_embd; keys and tensors in orders potop does not write.
potop imports each (`potop import`); unit_tests' HfImport.WritesLogitsOfImportedModels computes
the imported model's logits for random ids, which must equal those of GPT-2's and Llama's forward
passes written in PyTorch (tests/torch/check_hf_export.py) on the stored (rounded) weights (for a
model that kept a GGUF file's quantized matrices: on those dequantized; its own quantized logits
are printed beside). GGUF files potop cannot read are refused in one line. The
imported directories then work with potop info, sample, eval, attention, quantize and train --init-from,
and export --format hf writes the imported tensors back bit for bit. A model whose next token is
always <|endoftext|> shows that sample and serve stop at an imported model's end of text.
Without torch it exits 77 (a skip; a failure with
POTOP_STRICT_SKIPS=1).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
TEXT = ("Potop. Zażółć gęślą jaźń, pchnąć w tę łódź jeża! The quick brown fox jumps over the lazy dog. "
        "Кмициц и Оленька. 深度学习 🙂 def f(x): return x * 2\n") * 3


def learn_byte_bpe(text, merges_wanted):
    """A byte-level BPE as GPT-2's files hold it: the 256 byte characters, merges, <|endoftext|>."""
    from check_hf_export import bytes_to_unicode
    alphabet = bytes_to_unicode()
    vocab = [alphabet[b] for b in range(256)]
    words = [[alphabet[b] for b in w.encode("utf-8")] for w in text.split(" ")]
    merges = []
    for _ in range(merges_wanted):
        counts = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        (a, b), _ = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(f"{a} {b}")
        vocab.append(a + b)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if w[i] == a and w[i + 1] == b:
                    w[i:i + 2] = [a + b]
                i += 1
    vocab.append("<|endoftext|>")
    return {t: i for i, t in enumerate(vocab)}, merges


def write_safetensors(path, tensors, dtype):
    """tensors: name -> float32 numpy array, stored as dtype (F32, F16, BF16)."""
    import numpy as np
    import torch
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors.items():
        if dtype == "F32" or a.dtype != np.float32:
            data = a.astype(np.float32).tobytes()
            kind = "F32"
        elif dtype == "F16":
            data, kind = a.astype(np.float16).tobytes(), "F16"
        else:
            data, kind = torch.from_numpy(a).to(torch.bfloat16).view(torch.int16).numpy().tobytes(), "BF16"
        header[name] = {"dtype": kind, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def write_tensors(d, tensors, dtype, shards=1):
    """The tensors as save_pretrained writes them into d: model.safetensors, or that many shards
    named by model.safetensors.index.json."""
    if shards == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), tensors, dtype)
        return
    names = list(tensors)
    weight_map, per = {}, (len(names) + shards - 1) // shards
    for k in range(shards):
        file = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[k * per:(k + 1) * per]}
        write_safetensors(os.path.join(d, file), part, dtype)
        weight_map.update({n: file for n in part})
    json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map},
              open(os.path.join(d, "model.safetensors.index.json"), "w"), indent=2)


def stored(a, dtype):
    """The values a file of this dtype holds, as float64."""
    import numpy as np
    import torch
    if dtype == "F16":
        return a.astype(np.float16).astype(np.float64)
    if dtype == "BF16":
        return torch.from_numpy(a).to(torch.bfloat16).double().numpy()
    return a.astype(np.float64)


def gpt2_state(rng, C, L, V, T):
    """GPT2LMHeadModel's parameters under "transformer." names, spread so that each matters."""
    s = {"transformer.wte.weight": rng.normal(0, 0.3, (V, C)), "transformer.wpe.weight": rng.normal(0, 0.1, (T, C))}
    for l in range(L):
        h = f"transformer.h.{l}."
        for ln in ["ln_1", "ln_2"]:
            s[h + ln + ".weight"], s[h + ln + ".bias"] = 1 + rng.normal(0, 0.2, C), rng.normal(0, 0.1, C)
        for name, n_in, n_out in [("attn.c_attn", C, 3 * C), ("attn.c_proj", C, C), ("mlp.c_fc", C, 4 * C),
                                  ("mlp.c_proj", 4 * C, C)]:
            s[h + name + ".weight"] = rng.normal(0, 1 / n_in ** 0.5, (n_in, n_out))
            s[h + name + ".bias"] = rng.normal(0, 0.1, n_out)
    s["transformer.ln_f.weight"], s["transformer.ln_f.bias"] = 1 + rng.normal(0, 0.2, C), rng.normal(0, 0.1, C)
    return {k: v.astype("float32") for k, v in s.items()}


def llama_state(rng, C, L, V, H, Hkv, F, tie):
    D = C // H
    s = {"model.embed_tokens.weight": rng.normal(0, 0.5, (V, C)), "model.norm.weight": 1 + rng.normal(0, 0.2, C)}
    for l in range(L):
        p = f"model.layers.{l}."
        s[p + "input_layernorm.weight"] = 1 + rng.normal(0, 0.2, C)
        s[p + "post_attention_layernorm.weight"] = 1 + rng.normal(0, 0.2, C)
        for name, n_out, n_in in [("self_attn.q_proj", H * D, C), ("self_attn.k_proj", Hkv * D, C),
                                  ("self_attn.v_proj", Hkv * D, C), ("self_attn.o_proj", C, H * D),
                                  ("mlp.gate_proj", F, C), ("mlp.up_proj", F, C), ("mlp.down_proj", C, F)]:
            s[p + name + ".weight"] = rng.normal(0, 1 / n_in ** 0.5, (n_out, n_in))
    if not tie:
        s["lm_head.weight"] = rng.normal(0, 0.3, (V, C))
    return {k: v.astype("float32") for k, v in s.items()}


def write_case(root, name, cfg, state, dtype, vocab, merges, shards=1, extra=None):
    """The HF directory root/name/hf; returns the reference weights (float64 of what is stored)."""
    import numpy as np
    hf = os.path.join(root, name, "hf")
    os.makedirs(hf)
    json.dump(cfg, open(os.path.join(hf, "config.json"), "w"), indent=2)
    if vocab is not None:  # else the caller writes the tokenizer's files
        json.dump(vocab, open(os.path.join(hf, "vocab.json"), "w", encoding="utf-8"), ensure_ascii=False)
        open(os.path.join(hf, "merges.txt"), "w", encoding="utf-8").write("#version: 0.2\n" + "\n".join(merges) + "\n")
    write_tensors(hf, {**state, **(extra or {})}, dtype, shards)
    return {k: stored(v, dtype) for k, v in state.items()}, np


def start_server(potop, model):
    """`potop serve -m model` on a free port: the process, its URL, and what it said before listening."""
    server = subprocess.Popen([potop, "serve", "-m", model, "--port", "0", "--threads", "1"], stderr=subprocess.PIPE,
                              text=True)
    url, said = None, ""
    for line in server.stderr:
        said += line
        if "listening on " in line:
            url = line.split("listening on ")[1].split()[0]
            break
    return server, url, said


def llama2_sentencepiece(root):
    """A SentencePiece BPE trained here as Llama 2's is laid out: <unk> 0, <s> 1, </s> 2, no <pad>,
    byte fallback, digits split, the default "▁" before the text. Returns its .model file."""
    import sentencepiece
    prefix = os.path.join(root, "llama2-spm")
    lines = [l for l in (TEXT * 3).split("\n") if l.strip()]
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=prefix, model_type="bpe",
                                             vocab_size=400, hard_vocab_limit=False, byte_fallback=True,
                                             split_digits=True, character_coverage=1.0,
                                             normalization_rule_name="identity", remove_extra_whitespaces=False,
                                             minloglevel=2)
    return prefix + ".model"


def gguf_vocab_keys(vocab, merges):
    """tokenizer.ggml.* of a byte-level BPE, as convert_hf_to_gguf.py writes GPT-2's."""
    from gguf_files import ARRAY, BOOL, I32, STRING, U32
    tokens = sorted(vocab, key=vocab.get)
    eot = vocab["<|endoftext|>"]
    return [("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, "gpt-2"),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.token_type", ARRAY, (I32, [3 if i == eot else 1 for i in range(len(tokens))])),
            ("tokenizer.ggml.merges", ARRAY, (STRING, merges)), ("tokenizer.ggml.bos_token_id", U32, eot),
            ("tokenizer.ggml.eos_token_id", U32, eot), ("tokenizer.ggml.add_bos_token", BOOL, False)]


def write_gpt2_gguf(root, name, state, cfg, vocab, merges, rng):
    """GPT-2 as llama.cpp's gpt2: matrices q8_0 ((out, in) rows), token_embd f16 and an output.weight
    beside it (the same values), keys and tensors in an order potop does not write, alignment 64.
    Returns the weights it holds under Hugging Face's names, float64."""
    import numpy as np
    from gguf_files import F32, F64, STRING, U32, U64, quantize, write_gguf
    os.makedirs(os.path.join(root, name))
    C, L, T = cfg["n_embd"], cfg["n_layer"], cfg["n_positions"]
    t, held = [], {}
    wte, held["transformer.wte.weight"] = quantize(state["transformer.wte.weight"], "f16")
    t += [("token_embd.weight", state["transformer.wte.weight"].shape, "f16", wte),
          ("output.weight", state["transformer.wte.weight"].shape, "f16", wte)]
    for hf, gg in [("wpe.weight", "position_embd.weight"), ("ln_f.weight", "output_norm.weight"),
                   ("ln_f.bias", "output_norm.bias")]:
        blob, held["transformer." + hf] = quantize(state["transformer." + hf], "f32")
        t.append((gg, state["transformer." + hf].shape, "f32", blob))
    for l in range(L):
        h, blk = f"transformer.h.{l}.", f"blk.{l}."
        for hf, gg in [("ln_1", "attn_norm"), ("ln_2", "ffn_norm"), ("attn.c_attn", "attn_qkv"),
                       ("attn.c_proj", "attn_output"), ("mlp.c_fc", "ffn_up"), ("mlp.c_proj", "ffn_down")]:
            bias, held[h + hf + ".bias"] = quantize(state[h + hf + ".bias"], "f32")
            t.append((blk + gg + ".bias", state[h + hf + ".bias"].shape, "f32", bias))
            w = state[h + hf + ".weight"]
            if w.ndim == 1:
                blob, held[h + hf + ".weight"] = quantize(w, "f32")
                t.append((blk + gg + ".weight", w.shape, "f32", blob))
            else:  # Conv1D (in, out) -> rows (out, in)
                blob, values = quantize(np.ascontiguousarray(w.T), "q8_0")
                held[h + hf + ".weight"] = values.T
                t.append((blk + gg + ".weight", w.T.shape, "q8_0", blob))
    order = rng.permutation(len(t))
    keys = [("general.alignment", U32, 64), ("gpt2.block_count", U32, L), ("general.architecture", STRING, "gpt2"),
            ("general.name", STRING, "GPT-2 written by the test"), ("gpt2.context_length", U32, T),
            ("gpt2.embedding_length", U32, C), ("gpt2.feed_forward_length", U32, 4 * C),
            ("gpt2.attention.head_count", U32, cfg["n_head"]), ("gpt2.attention.layer_norm_epsilon", F32, 1e-5),
            ("general.file_type", U32, 7), ("general.quantization_version", U32, 2),
            ("test.a_u64", U64, 1 << 40), ("test.a_f64", F64, 0.25)] + gguf_vocab_keys(vocab, merges)
    write_gguf(os.path.join(root, name, "model.gguf"), keys, [t[i] for i in order], alignment=64)
    return held


def write_llama_gguf(root, name, state, cfg, vocab, merges, rng, head_count_kv=None):
    """Llama (grouped-query, untied) as llama.cpp's llama: attn_q/attn_k rows permuted to adjacent
    rotary pairs, matrices q4_0, output.weight q8_0, token_embd bf16, norms f32, tensors shuffled.
    head_count_kv, when given, is written in place of the tensors' own key/value head count."""
    from gguf_files import F32, STRING, U32, llama_cpp_permute, quantize, write_gguf
    os.makedirs(os.path.join(root, name))
    C, L, H, Hkv = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    t, held = [], {}

    def add(hf, gg, kind, permute_heads=0):
        w = state[hf]
        rows = llama_cpp_permute(w, permute_heads) if permute_heads else w
        blob, _ = quantize(rows, kind)
        _, held[hf] = quantize(w, kind)  # row by row: the same values, in Hugging Face's order
        t.append((gg, w.shape, kind, blob))

    add("model.embed_tokens.weight", "token_embd.weight", "bf16")
    add("lm_head.weight", "output.weight", "q8_0")
    add("model.norm.weight", "output_norm.weight", "f32")
    for l in range(L):
        p, blk = f"model.layers.{l}.", f"blk.{l}."
        add(p + "input_layernorm.weight", blk + "attn_norm.weight", "f32")
        add(p + "post_attention_layernorm.weight", blk + "ffn_norm.weight", "f32")
        add(p + "self_attn.q_proj.weight", blk + "attn_q.weight", "q4_0", H)
        add(p + "self_attn.k_proj.weight", blk + "attn_k.weight", "q4_0", Hkv)
        for hf, gg in [("self_attn.v_proj", "attn_v"), ("self_attn.o_proj", "attn_output"), ("mlp.gate_proj", "ffn_gate"),
                       ("mlp.up_proj", "ffn_up"), ("mlp.down_proj", "ffn_down")]:
            add(p + hf + ".weight", blk + gg + ".weight", "q4_0")
    order = rng.permutation(len(t))
    keys = [("general.architecture", STRING, "llama"), ("general.name", STRING, "Llama written by the test"),
            ("llama.vocab_size", U32, cfg["vocab_size"]), ("llama.context_length", U32, cfg["max_position_embeddings"]),
            ("llama.embedding_length", U32, C), ("llama.block_count", U32, L),
            ("llama.feed_forward_length", U32, cfg["intermediate_size"]), ("llama.attention.head_count", U32, H),
            ("llama.attention.head_count_kv", U32, Hkv if head_count_kv is None else head_count_kv),
            ("llama.rope.dimension_count", U32, C // H),
            ("llama.rope.freq_base", F32, cfg["rope_theta"]),
            ("llama.attention.layer_norm_rms_epsilon", F32, cfg["rms_norm_eps"]),
            ("general.file_type", U32, 2)] + gguf_vocab_keys(vocab, merges)
    write_gguf(os.path.join(root, name, "model.gguf"), keys, [t[i] for i in order])
    return held


def gguf_refusals(potop, root, vocab, merges, check):
    """Files potop cannot import: one line naming the file and what it lacks, nothing written."""
    import numpy as np
    from gguf_files import STRING, U32, quantize, write_gguf
    base = [("general.architecture", STRING, "gpt2"), ("gpt2.block_count", U32, 1), ("gpt2.context_length", U32, 8),
            ("gpt2.embedding_length", U32, 32), ("gpt2.attention.head_count", U32, 2)] + gguf_vocab_keys(vocab, merges)
    blob, _ = quantize(np.zeros((len(vocab), 32), np.float32), "f32")
    cases = {
        "q4_K": (base, [("token_embd.weight", (len(vocab), 32), "q4_K", b"\0" * 144)], "is q4_K"),
        "falcon": ([("general.architecture", STRING, "falcon")] + base[1:], [], "general.architecture falcon"),
        "bert-vocab": (base[:5] + [("tokenizer.ggml.model", STRING, "bert")], [], "tokenizer.ggml.model bert"),
        "falcon-pre": ([("tokenizer.ggml.pre", STRING, "falcon") if k[0] == "tokenizer.ggml.pre" else k for k in base],
                          [], "tokenizer.ggml.pre falcon"),
        "missing-tensor": (base, [("token_embd.weight", (len(vocab), 32), "f32", blob)], "position_embd.weight is missing"),
    }
    for name, (keys, tensors, expect) in cases.items():
        path = os.path.join(root, f"refuse-{name}.gguf")
        write_gguf(path, keys, tensors)
        out = os.path.join(root, f"refuse-{name}")
        r = subprocess.run([potop, "import", path, "--out", out], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and expect in lines[0] and path in lines[0] and not os.path.exists(out),
              f"import refuses a GGUF with {name}: {r.stderr.strip()}")
    whole = open(os.path.join(root, "gguf-gpt2-q8_0", "model.gguf"), "rb").read()
    for cut in [10, len(whole) // 3, len(whole) - 100]:
        path = os.path.join(root, f"cut-{cut}.gguf")
        open(path, "wb").write(whole[:cut])
        r = subprocess.run([potop, "import", path, "--out", path + ".out"], capture_output=True, text=True)
        check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and path in r.stderr
              and not os.path.exists(path + ".out"), f"import refuses a GGUF cut at byte {cut}: {r.stderr.strip()}")


def kv_head_refusals(potop, root, state, cfg, vocab, merges, rng, check):
    """A key/value head count the tensors do not have (config.json's num_key_value_heads null, so
    num_attention_heads, or too large or too small; GGUF's head_count_kv 0, 1 or 4 against tensors
    of 2 heads) is refused in one line naming the file, nothing written."""
    cases = []
    for kv in [None, 4, 1]:
        name = f"kv-heads-{kv}"
        write_case(root, name, dict(cfg, num_key_value_heads=kv), state, "F32", vocab, merges)
        cases.append((f"config.json num_key_value_heads {kv}", os.path.join(root, name, "hf")))
    for kv in [0, 1, 4]:
        name = f"gguf-kv-heads-{kv}"
        write_llama_gguf(root, name, state, cfg, vocab, merges, rng, head_count_kv=kv)
        cases.append((f"GGUF head_count_kv {kv}", os.path.join(root, name, "model.gguf")))
    for what, source in cases:
        out = source + ".potop"
        r = subprocess.run([potop, "import", source, "--out", out], capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and source.split(os.sep)[-2] in lines[0] and
              "internal error" not in lines[0] and not os.path.exists(out),
              f"import refuses {what} against tensors of 2 key/value heads: {r.stderr.strip()}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    from check_hf_export import gpt2_logits, llama_logits, need_torch
    missing = need_torch("cli.hf_import_torch")
    if missing is not None:
        return missing
    import numpy as np
    potop, unit_tests = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(7)
    vocab, merges = learn_byte_bpe(TEXT, 60)
    V = len(vocab)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("ok   " if ok else "FAIL: ") + what, file=sys.stdout if ok else sys.stderr)
        failures += 0 if ok else 1

    with tempfile.TemporaryDirectory(prefix="potop-hf-import.") as root:
        refs = {}
        C, L, T = 32, 2, 48
        gpt2_cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_positions": T,
                    "n_ctx": T, "n_embd": C, "n_layer": L, "n_head": 4, "n_inner": None,
                    "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1,
                    "embd_pdrop": 0.1, "attn_pdrop": 0.1, "bos_token_id": V - 1, "eos_token_id": V - 1,
                    "scale_attn_weights": True, "tie_word_embeddings": True}
        # 1. F32, "transformer." names, causal-mask buffers (bias (1, 1, T, T), masked_bias ()).
        state = gpt2_state(rng, C, L, V, T)
        buffers = {}
        for l in range(L):
            buffers[f"transformer.h.{l}.attn.bias"] = np.tril(np.ones((T, T), np.float32))[None, None]
            buffers[f"transformer.h.{l}.attn.masked_bias"] = np.array(-1e4, np.float32)
        refs_state = {"gpt2": state}
        w, _ = write_case(root, "gpt2-f32-buffers", gpt2_cfg, state, "F32", vocab, merges, extra=buffers)
        refs["gpt2-f32-buffers"] = ("gpt2", gpt2_cfg, w)
        # 2. GPT2Model: no prefix, F16, two shards.
        state = gpt2_state(rng, C, L, V, T)
        plain = {k[len("transformer."):]: v for k, v in state.items()}
        cfg = dict(gpt2_cfg, architectures=["GPT2Model"], activation_function="gelu_pytorch_tanh")
        w, _ = write_case(root, "gpt2model-f16-sharded", cfg, plain, "F16", vocab, merges, shards=2)
        refs["gpt2model-f16-sharded"] = ("gpt2", gpt2_cfg, {"transformer." + k: v for k, v in w.items()})
        # 3. BF16 with lm_head.weight stored beside wte (tied: the same values); the exact GELU (erf)
        #    and another LayerNorm eps.
        state = gpt2_state(rng, C, L, V, T)
        cfg = dict(gpt2_cfg, activation_function="gelu", layer_norm_epsilon=1e-3)
        w, _ = write_case(root, "gpt2-bf16-lm-head-erf", cfg, state, "BF16", vocab, merges,
                          extra={"lm_head.weight": state["transformer.wte.weight"]})
        refs["gpt2-bf16-lm-head-erf"] = ("gpt2", cfg, w)
        # 4. Llama, F32, grouped-query attention, untied head.
        llama_cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": V, "hidden_size": C,
                     "intermediate_size": 64, "num_hidden_layers": L, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "hidden_act": "silu", "max_position_embeddings": T,
                     "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "rope_scaling": None, "attention_bias": False,
                     "mlp_bias": False, "tie_word_embeddings": False, "bos_token_id": V - 1, "eos_token_id": V - 1}
        state = llama_state(rng, C, L, V, 4, 2, 64, tie=False)
        refs_state["llama"] = state
        w, _ = write_case(root, "llama-f32-gqa-untied", llama_cfg, state, "F32", vocab, merges)
        refs["llama-f32-gqa-untied"] = ("llama", llama_cfg, w)
        # 5. SmolLM2's pattern: 3 heads over 1 K/V head, tied, rope_theta 1e5, BF16, sharded, inv_freq buffers.
        cfg = dict(llama_cfg, hidden_size=48, intermediate_size=128, num_attention_heads=3, num_key_value_heads=1,
                   head_dim=16, rope_theta=100000.0, tie_word_embeddings=True, rms_norm_eps=1e-5)
        state = llama_state(rng, 48, L, V, 3, 1, 128, tie=True)
        inv = {f"model.layers.{l}.self_attn.rotary_emb.inv_freq": np.ones(8, np.float32) for l in range(L)}
        w, _ = write_case(root, "smollm-bf16-tied-sharded", cfg, state, "BF16", vocab, merges, shards=3, extra=inv)
        refs["smollm-bf16-tied-sharded"] = ("llama", cfg, w)

        # 6. Llama 2's layout: SentencePiece's tokenizer.model with its own special ids (<unk> 0, <s> 1,
        #    </s> 2, no <pad>), a "▁" put before the text, byte fallback; F16.
        spm_file = llama2_sentencepiece(root)
        import sentencepiece
        sp = sentencepiece.SentencePieceProcessor(model_file=spm_file)
        cfg = dict(llama_cfg, vocab_size=sp.get_piece_size(), bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
        state = llama_state(rng, C, L, sp.get_piece_size(), 4, 2, 64, tie=False)
        w, _ = write_case(root, "llama2-spm-f16", cfg, state, "F16", None, None)
        shutil.copy(spm_file, os.path.join(root, "llama2-spm-f16", "hf", "tokenizer.model"))
        with open(os.path.join(root, "llama2-spm-f16", "hf", "tokenizer_config.json"), "w") as f:
            json.dump({"chat_template": "{{ bos_token }}[INST] {{ messages[0]['content'] }} [/INST]"}, f)
        refs["llama2-spm-f16"] = ("llama", cfg, w)

        # 7-8. GGUF files as llama.cpp's converter writes them (gguf_files.py), from the states of 1 and 4.
        refs["gguf-gpt2-q8_0"] = ("gpt2", gpt2_cfg, write_gpt2_gguf(root, "gguf-gpt2-q8_0", refs_state["gpt2"],
                                                                   gpt2_cfg, vocab, merges, rng))
        refs["gguf-llama-q4_0"] = ("llama", llama_cfg, write_llama_gguf(root, "gguf-llama-q4_0", refs_state["llama"],
                                                                      llama_cfg, vocab, merges, rng))

        for case, (arch, cfg, weights) in refs.items():
            d = os.path.join(root, case)
            source = os.path.join(d, "model.gguf") if case.startswith("gguf-") else os.path.join(d, "hf")
            r = subprocess.run([potop, "import", source, "--out", os.path.join(d, "potop")],
                               capture_output=True, text=True)
            check(r.returncode == 0, f"{case}: potop import ({r.stderr.strip().splitlines()[-1] if r.stderr else ''})")
            ids = [int(i) for i in rng.integers(0, cfg["vocab_size"], 40)]
            json.dump(ids, open(os.path.join(d, "ids.json"), "w"))
        env = dict(os.environ, POTOP_HF_IMPORT_CHECK=root)
        r = subprocess.run([unit_tests, "--gtest_filter=HfImport.WritesLogitsOfImportedModels"], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-4000:], r.stderr[-4000:], sep="\n", file=sys.stderr)
            print("FAIL: unit_tests could not compute the imported models' logits", file=sys.stderr)
            return 1
        from check_hf_export import read_safetensors
        for case, (arch, cfg, weights) in refs.items():
            d = os.path.join(root, case)
            ids = json.load(open(os.path.join(d, "ids.json")))
            got = read_safetensors(os.path.join(d, "potop_logits.safetensors"))[0]["logits"].astype(np.float64)
            want = (gpt2_logits if arch == "gpt2" else llama_logits)(cfg, weights, ids)
            scale, err = float(np.abs(want).max()), float(np.abs(got - want).max()) if got.shape == want.shape else 1e9
            check(err <= 2e-5 * max(1.0, scale), f"{case}: potop's logits are PyTorch's ({len(ids)} tokens, "
                  f"max |diff| {err:.2e}, max |logit| {scale:.1f})")
            quantized = os.path.join(d, "potop_quantized_logits.safetensors")
            if os.path.exists(quantized):
                q = read_safetensors(quantized)[0]["logits"].astype(np.float64)
                qerr = float(np.abs(q - want).max())
                agree = float(np.mean(q.argmax(-1) == want.argmax(-1)))
                print(f"     {case}: with its quantized matrices: max |diff| {qerr:.2e}, same top token at "
                      f"{agree:.0%} of positions")

        # Llama 2's tokenizer: potop's ids are SentencePiece's own on every line of the text (its "▁"
        # before each line, its bytes for what it lacks), and its <s> is what a chat template writes.
        d = os.path.join(root, "llama2-spm-f16", "potop")
        lines = [l for l in (TEXT + "\nДобрый день 👋 12345\n  two  spaces").split("\n") if l]
        r = subprocess.run([potop, "tokenizer", "encode", "--tokenizer", d], input="\n".join(lines) + "\n",
                           capture_output=True, text=True)
        got = [[int(t) for t in l.split()] for l in r.stdout.splitlines()]
        check(r.returncode == 0 and got == [sp.encode(l) for l in lines],
              f"llama2-spm-f16: potop encodes as SentencePiece ({got[:1]} vs {[sp.encode(l) for l in lines][:1]}) {r.stderr}")
        with open(os.path.join(root, "llama2-chat.json"), "w") as f:
            json.dump([{"role": "user", "content": "Cześć"}], f)
        r = subprocess.run([potop, "chat-template", d, "--messages", os.path.join(root, "llama2-chat.json")],
                           capture_output=True, text=True)
        check(r.returncode == 0 and r.stdout == "<s>[INST] Cześć [/INST]",
              f"llama2-spm-f16: its chat template writes its <s>: {r.stdout!r} {r.stderr}")
        r = subprocess.run([potop, "info", "-m", d, "--json"], capture_output=True, text=True)
        check(r.returncode == 0 and json.loads(r.stdout)["tokenizer"]["kind"] == "bpe",
              f"llama2-spm-f16: potop info reads it {r.stderr}")

        # The imported model is an ordinary potop model directory.
        d = os.path.join(root, "gpt2-f32-buffers", "potop")
        r = subprocess.run([potop, "info", "-m", d], capture_output=True, text=True)
        check(r.returncode == 0 and "byte_bpe" in r.stdout + r.stderr, "potop info shows the imported GPT-2")
        r = subprocess.run([potop, "sample", "-m", d, "--prompt", "The quick", "-n", "8", "--temperature", "0"],
                           capture_output=True)  # bytes: a random model's tokens need not end on a character
        check(r.returncode == 0 and r.stdout.startswith(b"The quick"), f"potop sample continues a prompt: {r.stdout!r}")
        text_file = os.path.join(root, "text.txt")
        open(text_file, "w", encoding="utf-8").write(TEXT)
        r = subprocess.run([potop, "eval", "-m", d, "--data", text_file], capture_output=True, text=True)
        check(r.returncode == 0, f"potop eval scores text with it ({(r.stdout + r.stderr).strip()[-200:]})")
        r = subprocess.run([potop, "attention", "-m", d, "-p", "The quick brown fox", "--out",
                            os.path.join(root, "attention.html")], capture_output=True, text=True)
        check(r.returncode == 0 and os.path.getsize(os.path.join(root, "attention.html")) > 0,
              "potop attention draws its heads")
        # A model whose every next token is its end of text (ln_f gives v, wte[<|endoftext|>] points
        # along v): sample and serve stop there, not showing it (finish_reason "stop"); --ignore-eos
        # goes on.
        state = gpt2_state(rng, C, L, V, T)
        v = rng.normal(0, 1, C).astype(np.float32)
        state["transformer.ln_f.weight"], state["transformer.ln_f.bias"] = np.zeros(C, np.float32), v
        state["transformer.wte.weight"][V - 1] = 10 * v / np.linalg.norm(v)
        write_case(root, "gpt2-ends", gpt2_cfg, state, "F32", vocab, merges)
        # Its chat template (tokenizer_config.json's, Jinja) is kept, and serve's chats use it.
        chat_template = ("{% for m in messages %}{{ bos_token }}{{ m['role'] }}: {{ m['content'] | trim }}\n{% endfor %}"
                         "{% if add_generation_prompt %}{{ bos_token }}assistant:{% endif %}")
        with open(os.path.join(root, "gpt2-ends", "hf", "tokenizer_config.json"), "w") as f:
            json.dump({"chat_template": chat_template}, f)
        d = os.path.join(root, "gpt2-ends", "potop")
        r = subprocess.run([potop, "import", os.path.join(root, "gpt2-ends", "hf"), "--out", d], capture_output=True, text=True)
        ends = json.load(open(os.path.join(d, "config.json"))).get("generation") if r.returncode == 0 else None
        check(ends == {"eos_token_ids": [V - 1]}, f"import keeps the end of text, <|endoftext|> ({ends})")
        kept = json.load(open(os.path.join(d, "config.json"))).get("chat_template") if r.returncode == 0 else None
        check(kept == chat_template, f"import keeps tokenizer_config.json's chat_template ({kept!r})")
        r = subprocess.run([potop, "info", "-m", d], capture_output=True, text=True)
        check(f"chat template: Jinja, {len(chat_template.encode())} bytes" in r.stdout,
              f"potop info shows the chat template: {r.stdout[-400:]}")
        with open(os.path.join(root, "chat.json"), "w") as f:
            json.dump([{"role": "user", "content": " The quick "}], f)
        r = subprocess.run([potop, "chat-template", d, "--messages", os.path.join(root, "chat.json")],
                           capture_output=True, text=True)
        check(r.stdout == "<|endoftext|>user: The quick\n<|endoftext|>assistant:",
              f"potop chat-template renders the imported model's template: {r.stdout!r} {r.stderr}")
        # Exported, the template goes with it: tokenizer_config.json's, GGUF's tokenizer.chat_template
        # (imported back here).
        again = os.path.join(root, "gpt2-ends", "again")
        r = subprocess.run([potop, "export", "-m", d, "--format", "hf", "--out", again], capture_output=True, text=True)
        kept = json.load(open(os.path.join(again, "tokenizer_config.json"))).get("chat_template") if r.returncode == 0 else None
        check(kept == chat_template, f"export --format hf writes the chat template into tokenizer_config.json ({kept!r})")
        gguf = os.path.join(root, "gpt2-ends", "model.gguf")
        r = subprocess.run([potop, "export", "-m", d, "--format", "gguf", "--out", gguf], capture_output=True, text=True)
        r2 = subprocess.run([potop, "import", gguf, "--out", gguf + ".potop"], capture_output=True, text=True)
        kept = json.load(open(os.path.join(gguf + ".potop", "config.json"))).get("chat_template") if r2.returncode == 0 else None
        check(r.returncode == 0 and kept == chat_template,
              f"export --format gguf writes tokenizer.chat_template, which import reads ({kept!r} {r.stderr[-200:]} {r2.stderr[-200:]})")
        # The real llama.cpp reads that file's template, and the rendered prompt's tokens (its
        # written-out <|endoftext|> read as the token), compared below with serve's count.
        llama_cpp = None
        gguf_tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gguf")
        if shutil.which("node") and os.path.isdir(os.path.join(gguf_tests, "node_modules", "node-llama-cpp")):
            prompt = os.path.join(root, "chat-prompt.txt")
            with open(prompt, "w") as f:
                f.write(subprocess.run([potop, "chat-template", d, "--messages", os.path.join(root, "chat.json")],
                                       capture_output=True, text=True).stdout)
            r = subprocess.run(["node", os.path.join(gguf_tests, "chat_prompt.mjs"), gguf, prompt],
                               capture_output=True, text=True)
            llama_cpp = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-300:]}
            check(llama_cpp.get("chat_template") == chat_template,
                  f"llama.cpp (node-llama-cpp) reads the exported GGUF's chat template: {llama_cpp}")
        elif os.environ.get("POTOP_STRICT_SKIPS") == "1":
            check(False, "node or tests/gguf/node_modules missing: llama.cpp cannot check the GGUF's chat template")
        sample = [potop, "sample", "-m", d, "-p", "The quick", "-n", "5", "--temperature", "0", "--json"]
        r = subprocess.run(sample, capture_output=True, text=True)
        got = json.loads(r.stdout)["samples"][0] if r.returncode == 0 else {}
        check(got.get("finish_reason") == "stop" and got.get("text") == "The quick",
              f"potop sample stops at the end of text, not showing it: {got or r.stderr}")
        r = subprocess.run(sample + ["--ignore-eos"], capture_output=True, text=True)
        got = json.loads(r.stdout)["samples"][0] if r.returncode == 0 else {}
        check(got.get("finish_reason") == "length" and got.get("tokens") == 5 and got.get("text", "").count("<|endoftext|>") == 5,
              f"potop sample --ignore-eos goes on: {got or r.stderr}")
        server, url, said = start_server(potop, d)
        try:
            check("chats use the model's own chat template" in said, f"potop serve says it chats with the model's template: {said}")
            body = json.dumps({"prompt": "The quick", "max_tokens": 5, "temperature": 0}).encode()
            req = urllib.request.Request(url + "/v1/completions", body, {"Content-Type": "application/json"})
            got = json.loads(urllib.request.urlopen(req, timeout=60).read())
            choice = got["choices"][0]
            check(choice["finish_reason"] == "stop" and choice["text"] == "",
                  f"potop serve's completion stops at the end of text: {choice}, usage {got.get('usage')}")
            body = json.dumps({"prompt": "The quick", "max_tokens": 5, "temperature": 0, "ignore_eos": True}).encode()
            req = urllib.request.Request(url + "/v1/completions", body, {"Content-Type": "application/json"})
            choice = json.loads(urllib.request.urlopen(req, timeout=60).read())["choices"][0]
            check(choice["finish_reason"] == "length" and choice["text"].count("<|endoftext|>") == 5,
                  f"potop serve's ignore_eos goes on past it: {choice}")
            # The chat prompt is the template's, its written-out <|endoftext|> read as the token:
            # "user: The quick\n" and "assistant:" as text, two <|endoftext|> tokens.
            def prompt_tokens(body):
                req = urllib.request.Request(url + "/v1/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
                return json.loads(urllib.request.urlopen(req, timeout=60).read())["usage"]["prompt_tokens"]
            text_tokens = prompt_tokens({"prompt": "user: The quick\n", "max_tokens": 1}) + \
                prompt_tokens({"prompt": "assistant:", "max_tokens": 1})
            body = json.dumps({"messages": [{"role": "user", "content": " The quick "}], "max_tokens": 3,
                               "temperature": 0}).encode()
            req = urllib.request.Request(url + "/v1/chat/completions", body, {"Content-Type": "application/json"})
            got = json.loads(urllib.request.urlopen(req, timeout=60).read())
            check(got["usage"]["prompt_tokens"] == text_tokens + 2 and got["choices"][0]["finish_reason"] == "stop",
                  f"potop serve's chat renders the model's Jinja template ({got['usage']}, {text_tokens} + 2 expected)")
            if llama_cpp is not None:
                check(llama_cpp.get("prompt_tokens") == got["usage"]["prompt_tokens"],
                      f"llama.cpp reads the rendered prompt as serve does: {llama_cpp.get('prompt_tokens')} tokens, "
                      f"serve {got['usage']['prompt_tokens']}")
        except Exception as e:  # noqa: BLE001 - any failure is the check's
            check(False, f"potop serve's completion at the end of text: {e}")
        finally:
            server.terminate()
            server.wait(timeout=30)

        # A chat template potop cannot render: serve says so at start-up and chats with the plain one.
        broken = os.path.join(root, "gpt2-ends", "broken-template")
        shutil.copytree(d, broken)
        config = json.load(open(os.path.join(broken, "config.json")))
        config["chat_template"] = "{% include 'other.jinja' %}"
        json.dump(config, open(os.path.join(broken, "config.json"), "w"))
        server, _, said = start_server(potop, broken)
        try:
            check("chat template is not used" in said and "chats use the plain template" in said,
                  f"potop serve says at start-up that it falls back to the plain template: {said}")
        finally:
            server.terminate()
            server.wait(timeout=30)

        # A chat template over 1 MiB (a payload, not a template): import keeps it and says serve will
        # not use it; serve names it at start-up and chats with the plain one.
        oversized = os.path.join(root, "gpt2-ends", "hf-oversized-template")
        shutil.copytree(os.path.join(root, "gpt2-ends", "hf"), oversized)
        with open(os.path.join(oversized, "chat_template.jinja"), "w") as f:
            f.write("{{ bos_token }}" + "x" * (2 << 20) + "{% for m in messages %}{{ m.content }}{% endfor %}")
        out = os.path.join(root, "gpt2-ends", "potop-oversized-template")
        r = subprocess.run([potop, "import", oversized, "--out", out], capture_output=True, text=True)
        check(r.returncode == 0 and "more than 1 MiB" in r.stderr and "potop serve will not use it" in r.stderr,
              f"import of a 2 MiB chat template says serve will not use it: {r.stderr.strip()[-300:]}")
        if r.returncode == 0:
            server, _, said = start_server(potop, out)
            try:
                check("chat template is not used" in said and "more than 1 MiB" in said,
                      f"potop serve names the 2 MiB chat template at start-up: {said}")
            finally:
                server.terminate()
                server.wait(timeout=30)

        # A GGUF import is an ordinary potop model too; a file potop cannot read is refused in one line.
        d = os.path.join(root, "gguf-llama-q4_0", "potop")
        r = subprocess.run([potop, "info", "-m", d], capture_output=True, text=True)
        check(r.returncode == 0 and "imported: GGUF llama" in r.stdout and "q4_0" in r.stdout,
              f"potop info shows the GGUF Llama and its q4_0 matrices {r.stdout[-300:]}")
        r = subprocess.run([potop, "sample", "-m", d, "--prompt", "The quick", "-n", "8", "--temperature", "0"],
                           capture_output=True)
        check(r.returncode == 0 and r.stdout.startswith(b"The quick"), f"potop sample runs the GGUF Llama: {r.stdout!r}")
        gguf_refusals(potop, root, vocab, merges, check)
        kv_head_refusals(potop, root, refs_state["llama"], llama_cfg, vocab, merges, rng, check)
        # Export after import gives back the tensors that were imported, bit for bit.
        for case in ["gpt2-f32-buffers", "llama-f32-gqa-untied"]:
            d = os.path.join(root, case)
            r = subprocess.run([potop, "export", "-m", os.path.join(d, "potop"), "--format", "hf", "--out",
                                os.path.join(d, "again")], capture_output=True, text=True)
            first = read_safetensors(os.path.join(d, "hf", "model.safetensors"))[0]
            again = read_safetensors(os.path.join(d, "again", "model.safetensors"))[0] if r.returncode == 0 else {}
            same = bool(again) and all(name in first and first[name].tobytes() == t.tobytes() for name, t in again.items())
            same = same and set(first) - set(again) <= {n for n in first if n.endswith(("attn.bias", "masked_bias"))}
            check(r.returncode == 0 and same, f"{case}: export --format hf gives back the same {len(again)} tensors "
                  f"bit for bit {r.stderr[-200:] if r.returncode else ''}")
        # Fine-tuning starts from the imported weights (nanoGPT's init_from='gpt2'); quantize takes it.
        long_file = os.path.join(root, "long.txt")
        open(long_file, "w", encoding="utf-8").write(TEXT * 40)
        for case, arch in [("gpt2-f32-buffers", []), ("smollm-bf16-tied-sharded", ["--arch", "llama"])]:
            d = os.path.join(root, case, "potop")
            r = subprocess.run([potop, "train"] + arch + ["--init-from", d, "--data", long_file, "--out",
                                os.path.join(root, case, "tuned"), "--steps", "30", "--eval-interval", "30",
                                "--eval-iters", "2", "--batch-size", "4", "--lr", "3e-3"],
                               capture_output=True, text=True)
            losses = [float(l.split("val loss ")[1]) for l in (r.stdout + r.stderr).splitlines() if "val loss " in l]
            check(r.returncode == 0 and len(losses) >= 2 and losses[-1] < losses[0],
                  f"{case}: train --init-from fine-tunes it (val loss {losses}) {r.stderr[-300:] if r.returncode else ''}")
            # The fine-tuned model ends its texts where the imported one does, after a resume too.
            tuned = os.path.join(root, case, "tuned")
            want = json.load(open(os.path.join(d, "config.json"))).get("generation")
            got = [json.load(open(os.path.join(tuned, "config.json"))).get("generation")]
            r = subprocess.run([potop, "train", "--resume", tuned, "--steps", "32"], capture_output=True, text=True)
            got.append(json.load(open(os.path.join(tuned, "config.json"))).get("generation") if r.returncode == 0 else None)
            check(want is not None and got == [want, want],
                  f"{case}: config.json keeps generation {want} when fine-tuned and resumed: {got} {r.stderr[-200:]}")
            r = subprocess.run([potop, "quantize", "-m", d, "--type", "q8_0", "--out", d + "-q8_0"],
                               capture_output=True, text=True)
            r2 = subprocess.run([potop, "sample", "-m", d + "-q8_0", "-p", "The", "-n", "4"], capture_output=True)
            check(r.returncode == 0 and r2.returncode == 0, f"{case}: quantize q8_0, then sample ({r.stderr[-200:]})")
    if failures:
        print(f"{failures} check(s) failed", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
