"""potop's tokenizers vs SentencePiece's own tools, side by side (docs/tokenizers.md).

    bash bench/run.sh tokenizers [--quick]     # builds potop, then runs this
    python3 bench/tokenizers.py --potop build/release/src/potop [--mb 3] [--rounds 3] [--quick]

On one text (../shared/data/potop.txt when present, cut to --mb; else text made by
scripts/multilingual-text.py), in one run:
  1. Training: `potop tokenizer train --kind bpe|unigram --vocab-size 8000` and `spm_train` with
     the same flags (potop's sentencepiece_flags, the same thread count), each timed as a whole
     process; reported as seconds per MB of text (target < 10 s/MB).
  2. Encoding, single-threaded: `potop tokenizer encode` and `spm_encode --output_format=id` on
     the same lines with the same model (the bpe and unigram models just trained; potop's byte,
     char and word tokenizers too, for comparison), reported as sentences (lines) per second
     (target >= 50,000). Both read standard input and write one line of ids per line, so the
     times include the same parsing and printing work.
Each time is the median of --rounds runs, potop and SentencePiece alternating; ratios are
potop / SentencePiece (a training ratio > 1 means potop is slower; an encoding ratio > 1 that it
is faster).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from machine import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCAB = 8000
# potop's SentencePiece training flags (src/tokenizer/sentencepiece_tokenizer.cpp,
# sentencepiece_flags), so that both sides do the same work.
SPM_FLAGS = [
    "--pad_id=0", "--bos_id=1", "--eos_id=2", "--unk_id=3", "--pad_piece=<pad>", "--bos_piece=<bos>",
    "--eos_piece=<eos>", "--unk_piece=<unk>", "--byte_fallback=true", "--normalization_rule_name=identity",
    "--add_dummy_prefix=false", "--remove_extra_whitespaces=false", "--split_digits=true",
    "--allow_whitespace_only_pieces=true", "--max_sentence_length=65536", "--num_threads=16", "--minloglevel=2",
]


def timed(cmd: list[str], stdin: str | None = None, stdout=subprocess.DEVNULL) -> float:
    start = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        subprocess.run(cmd, stdin=f, stdout=stdout, stderr=subprocess.PIPE, check=True)
    return time.perf_counter() - start


def make_text(path: str, mb: float, generated: bool) -> str:
    shared = os.path.join(os.path.dirname(ROOT), "shared", "data", "potop.txt")
    limit = int(mb * 1e6)
    if os.path.exists(shared) and not generated:
        with open(shared, "rb") as f:
            data = f.read(limit)
        data = data[: data.rfind(b"\n") + 1] or data  # whole lines
        data = data.decode("utf-8", errors="ignore").encode()
        with open(path, "wb") as f:
            f.write(data)
        return f"../shared/data/potop.txt (first {len(data) / 1e6:.1f} MB)"
    with open(path, "w") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "multilingual-text.py"), str(limit), "1"],
                       stdout=f, check=True)
    return f"generated multilingual text ({os.path.getsize(path) / 1e6:.1f} MB, scripts/multilingual-text.py)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--potop", default=os.path.join(ROOT, "build", "release", "src", "potop"))
    ap.add_argument("--mb", type=float, default=3.0, help="MB of text to train and encode on")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 MB, 1 round")
    ap.add_argument("--generated", action="store_true", help="generated text even when ../shared has the corpus")
    ap.add_argument("--json", help="write the raw results here")
    a = ap.parse_args()
    if a.quick:
        a.mb, a.rounds = 1.0, 1
    for tool in ("spm_train", "spm_encode"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed (apt-get install sentencepiece, or scripts/setup.sh --all)")
    work = tempfile.mkdtemp(prefix="potop-tok-bench.")
    try:
        text = os.path.join(work, "text.txt")
        source = make_text(text, a.mb, a.generated)
        mb = os.path.getsize(text) / 1e6
        with open(text, "rb") as f:
            lines = f.read().count(b"\n")
        print(f"tokenizer benchmark: {source}, {lines} lines; CPU: {cpu_name()}, {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.2f}")
        results = {"text": source, "mb": mb, "lines": lines, "cpu": cpu_name(), "train": {}, "encode": {}}

        print(f"\ntraining a {VOCAB}-token vocabulary (seconds per MB; median of {a.rounds}):")
        print(f"  {'kind':8} {'potop':>9} {'spm_train':>10} {'potop/spm':>10}   target < 10 s/MB")
        for kind in ("bpe", "unigram"):
            ours, theirs = [], []
            for r in range(a.rounds):
                out = os.path.join(work, f"tok-{kind}")
                ours.append(timed([a.potop, "tokenizer", "train", "--kind", kind, "--vocab-size", str(VOCAB), "--data",
                                   text, "--out", out, "--force"]))
                theirs.append(timed(["spm_train", f"--input={text}", f"--model_prefix={work}/spm-{kind}",
                                     f"--model_type={kind}", f"--vocab_size={VOCAB}"] + SPM_FLAGS))
            o, t = statistics.median(ours) / mb, statistics.median(theirs) / mb
            results["train"][kind] = {"potop_s_per_mb": o, "spm_s_per_mb": t}
            print(f"  {kind:8} {o:9.2f} {t:10.2f} {o / t:10.2f}   {'ok' if o < 10 else 'MISSED'}")

        print(f"\nencoding, single-threaded (sentences/s; median of {a.rounds}):")
        print(f"  {'kind':8} {'potop':>10} {'spm_encode':>11} {'potop/spm':>10}   target >= 50000")
        for kind in ("bpe", "unigram", "byte", "char", "word"):
            tok = os.path.join(work, f"tok-{kind}")
            if kind in ("byte", "char", "word"):
                subprocess.run([a.potop, "tokenizer", "train", "--kind", kind, "--data", text, "--out", tok, "--force"],
                               stderr=subprocess.DEVNULL, check=True)
            ours, theirs = [], []
            for r in range(a.rounds):
                ours.append(timed([a.potop, "tokenizer", "encode", "--tokenizer", tok], stdin=text))
                if kind in ("bpe", "unigram"):
                    theirs.append(timed(["spm_encode", f"--model={work}/spm-{kind}.model", "--output_format=id"],
                                        stdin=text))
            o = lines / statistics.median(ours)
            t = lines / statistics.median(theirs) if theirs else None
            results["encode"][kind] = {"potop_sentences_per_s": o, "spm_sentences_per_s": t}
            spm = f"{t:11.0f} {o / t:10.2f}" if t else f"{'-':>11} {'-':>10}"
            print(f"  {kind:8} {o:10.0f} {spm}   {'ok' if o >= 50000 else 'MISSED'}")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(results, f, indent=1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
