"""potop word2vec vs gensim 4.2 and fastText 0.9.2, side by side (docs/word2vec.md).

    bash bench/run.sh word2vec [--quick]       # builds potop, then runs this
    python3 bench/word2vec.py --potop build/release/src/potop [--speed-only] [--quality-only]

All three get the SAME words: `potop word2vec split --lowercase` writes each corpus as
space-separated words (ICU word boundaries, letters and digits only; one line per line of the
text), and every tool trains on that file (potop with --split space, gensim with LineSentence's
corpus_file path, fastText with -minn 0 -maxn 0, i.e. plain word2vec without subwords).
Settings for all: dim 100, window 5, negative 5, sample 1e-3, min-count 5, alpha 0.025.

1. Speed: skip-gram and CBOW, 1 and 2 threads, --epochs 3 on Potop. words/s = epochs × the
   corpus's in-vocabulary words / training seconds, each tool's training phase only (potop:
   train.json; gensim: the train() call; fastText: its own words/sec/thread × threads, which
   also counts one end-of-line token per line). Ratios potop / other; targets: ≥ 1 × gensim and
   ≥ 3 × fastText.
2. Quality: for Potop (questions-words-pl.txt) and the English side of tatoeba-eng-pol.tsv
   (questions-words.txt), potop and gensim with 3 seeds each (skip-gram and CBOW, 5 epochs, 2
   threads): analogy accuracy and coverage by gensim's evaluate_word_analogies(restrict_vocab=
   30000, case_insensitive=True) for both (potop's own evaluate gives the same numbers, tested in
   tests/cli/word2vec.sh), mean and spread (min..max); and the Spearman correlation between
   potop's and gensim's similarity rankings: for each of the 200 most frequent words, its
   cosines to the 2000 most frequent words in potop's vectors vs gensim's, correlated, averaged.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from machine import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared", "data")
SETTINGS = dict(dim=100, window=5, negative=5, sample=1e-3, min_count=5, alpha=0.025)


def potop_train(potop, words, out, model, threads, epochs, seed):
    s = SETTINGS
    cmd = [potop, "word2vec", "train", "--data", words, "--out", out, "--model", model, "--split", "space",
           "--dim", str(s["dim"]), "--window", str(s["window"]), "--negative", str(s["negative"]),
           "--sample", str(s["sample"]), "--min-count", str(s["min_count"]), "--alpha", str(s["alpha"]),
           "--epochs", str(epochs), "--threads", str(threads), "--seed", str(seed), "--force"]  # reused --out
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(os.path.join(out, "train.json")) as f:
        info = json.load(f)
    with open(os.path.join(out, "vocab.json")) as f:
        kept = sum(json.load(f)["counts"])
    return kept * epochs / info["seconds"], os.path.join(out, "vectors.bin")


def gensim_train(words, out, model, threads, epochs, seed, kept):
    from gensim.models import Word2Vec
    s = SETTINGS
    w2v = Word2Vec(vector_size=s["dim"], window=s["window"], negative=s["negative"], hs=0, sample=s["sample"],
                   min_count=s["min_count"], alpha=s["alpha"], min_alpha=s["alpha"] * 1e-4,
                   sg=1 if model == "skipgram" else 0, workers=threads, seed=seed)
    w2v.build_vocab(corpus_file=words)
    start = time.perf_counter()
    w2v.train(corpus_file=words, epochs=epochs, total_words=w2v.corpus_total_words, total_examples=w2v.corpus_count)
    seconds = time.perf_counter() - start
    path = os.path.join(out, "gensim.bin")
    w2v.wv.save_word2vec_format(path, binary=True)
    return kept * epochs / seconds, path


def fasttext_train(words, out, model, threads, epochs, seed):
    s = SETTINGS
    cmd = ["fasttext", model, "-input", words, "-output", os.path.join(out, "fasttext"), "-minn", "0", "-maxn", "0",
           "-dim", str(s["dim"]), "-ws", str(s["window"]), "-neg", str(s["negative"]), "-t", str(s["sample"]),
           "-minCount", str(s["min_count"]), "-lr", str(s["alpha"]), "-epoch", str(epochs), "-thread", str(threads),
           "-loss", "ns", "-verbose", "2"]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    rates = re.findall(r"words/sec/thread:\s*(\d+)", r.stdout + r.stderr)
    return float(rates[-1]) * threads


def split_corpus(potop, src, dst, english_side=False):
    text = src
    if english_side:  # the first column of tatoeba-eng-pol.tsv
        text = dst + ".raw"
        with open(src, encoding="utf-8") as f, open(text, "w", encoding="utf-8") as g:
            for line in f:
                g.write(line.split("\t", 1)[0] + "\n")
    subprocess.run([potop, "word2vec", "split", "--lowercase", "--data", text, "--out", dst], check=True)
    with open(dst, encoding="utf-8") as f:
        return sum(len(l.split()) for l in f)


def speed(potop, words, tmp, rounds):
    kept = None
    rows = []
    for model in ("skipgram", "cbow"):
        for threads in (1, 2):
            r = {"model": model, "threads": threads, "potop": [], "gensim": [], "fasttext": []}
            for _ in range(rounds):
                rate, _ = potop_train(potop, words, os.path.join(tmp, "speed"), model, threads, 3, 1)
                r["potop"].append(rate)
                if kept is None:
                    with open(os.path.join(tmp, "speed", "vocab.json")) as f:
                        kept = sum(json.load(f)["counts"])
                r["gensim"].append(gensim_train(words, tmp, model, threads, 3, 1, kept)[0])
                r["fasttext"].append(fasttext_train(words, tmp, model, threads, 3, 1))
            rows.append({k: statistics.median(v) if isinstance(v, list) else v for k, v in r.items()})
            p, g, f = rows[-1]["potop"], rows[-1]["gensim"], rows[-1]["fasttext"]
            print(f"{model:9s} threads {threads}: potop {p:10.0f}  gensim {g:10.0f}  fastText {f:10.0f} words/s"
                  f"   potop/gensim {p / g:5.2f} (target >= 1)   potop/fastText {p / f:5.2f} (target >= 3)", flush=True)
    return rows


def spearman(kv_a, kv_b, n_query=200, n_rank=2000):
    import numpy as np
    from scipy.stats import spearmanr
    words = [w for w in kv_a.index_to_key[:n_rank] if w in kv_b.key_to_index]
    a = np.stack([kv_a.get_vector(w, norm=True) for w in words])
    b = np.stack([kv_b.get_vector(w, norm=True) for w in words])
    sa, sb = a[:n_query] @ a.T, b[:n_query] @ b.T
    return float(np.mean([spearmanr(sa[i], sb[i]).correlation for i in range(min(n_query, len(words)))]))


def quality(potop, corpora, tmp, seeds, epochs):
    from gensim.models import KeyedVectors
    rows = []
    for name, words, questions in corpora:
        with open(words, encoding="utf-8") as f:
            kept_guess = sum(len(l.split()) for l in f)
        for model in ("skipgram", "cbow"):
            res = {"potop": [], "gensim": [], "spearman": []}
            for seed in seeds:
                _, pb = potop_train(potop, words, os.path.join(tmp, "q"), model, 2, epochs, seed)
                _, gb = gensim_train(words, tmp, model, 2, epochs, seed, kept_guess)
                kvs = {}
                for tool, path in (("potop", pb), ("gensim", gb)):
                    kv = KeyedVectors.load_word2vec_format(path, binary=True)
                    kvs[tool] = kv
                    score, sections = kv.evaluate_word_analogies(questions, restrict_vocab=30000, case_insensitive=True)
                    total = sections[-1]
                    asked = len(total["correct"]) + len(total["incorrect"])
                    with open(questions, encoding="utf-8") as f:
                        all_q = sum(1 for l in f if not l.startswith(":") and len(l.split()) == 4)
                    res[tool].append((100 * score, 100 * asked / all_q))
                res["spearman"].append(spearman(kvs["potop"], kvs["gensim"]))
            row = {"corpus": name, "model": model, **res}
            rows.append(row)
            def fmt(v):
                accs = [x[0] for x in v]
                return (f"acc {statistics.mean(accs):5.2f}% ({min(accs):.2f}..{max(accs):.2f}) "
                        f"coverage {v[0][1]:.1f}%")
            print(f"{name:8s} {model:9s} potop {fmt(res['potop'])} | gensim {fmt(res['gensim'])} | "
                  f"Spearman {statistics.mean(res['spearman']):.3f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--potop", default=os.path.join(ROOT, "build", "release", "src", "potop"))
    ap.add_argument("--rounds", type=int, default=1, help="speed runs per setting (the median is reported)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=5, help="epochs of the quality runs")
    ap.add_argument("--quick", action="store_true", help="1 seed, 1 epoch")
    ap.add_argument("--speed-only", action="store_true")
    ap.add_argument("--quality-only", action="store_true")
    ap.add_argument("--json", help="write the raw results here")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    if args.quick:
        args.seeds, args.epochs = 1, 1
    potop_txt = os.path.join(SHARED, "potop.txt")
    tatoeba = os.path.join(SHARED, "tatoeba-eng-pol.tsv")
    if not os.path.exists(potop_txt):
        sys.exit(f"bench/word2vec.py: {potop_txt} is missing (the Potop corpus, ../shared/data)")
    print(f"{cpu_name()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="potop-w2v-bench.") as tmp:
        words = os.path.join(tmp, "potop-words.txt")
        n = split_corpus(args.potop, potop_txt, words)
        print(f"Potop: {n} words after `potop word2vec split --lowercase`")
        if not args.quality_only:
            results["speed"] = speed(args.potop, words, tmp, args.rounds)
        if not args.speed_only:
            corpora = [("Potop", words, os.path.join(SHARED, "eval", "questions-words-pl.txt"))]
            if os.path.exists(tatoeba):
                eng = os.path.join(tmp, "english-words.txt")
                m = split_corpus(args.potop, tatoeba, eng, english_side=True)
                print(f"Tatoeba English: {m} words")
                corpora.append(("Tatoeba", eng, os.path.join(SHARED, "eval", "questions-words.txt")))
            results["quality"] = quality(args.potop, corpora, tmp, list(range(1, args.seeds + 1)), args.epochs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
