"""The expected values of tests/unit/report/test_translation_metrics.cpp, computed once with the
reference definitions and written into the test:
  BLEU: nltk's corpus_bleu with SmoothingFunction().method3 on 13a-tokenised text (sacreBLEU's
        default BLEU: 13a, mixed case, 'exp' smoothing), x100;
  chrF: sacreBLEU's chrF2 (char n-grams 1..6, whitespace removed, beta 2, corpus statistics),
        written out here from its definition (sacrebleu/metrics/chrf.py), as Debian has no
        sacrebleu package.
nltk and sacreBLEU agree when every hypothesis has at least 4 tokens: for a shorter one nltk counts
1 (not 0) n-grams of the missing orders (max(1, count) in modified_precision), so the sentences
here are all 4 tokens or longer.
    /usr/bin/python3 scripts/translation_metrics_expected.py
"""
import re
from collections import Counter

from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu

HYPOTHESES = [
    "The cat sat on the mat.",
    "I don't know, Tom - it's 3.5 km away!",
    "Przyjdź szybko, proszę.",
    "He said \"hello\" & left at 10-11 o'clock.",
    "Nothing matches here at all",
    "Mam psa i dwa koty.",
]
REFERENCES = [
    "The cat is sitting on the mat.",
    "I don't know, Tom; it's 3.5 km from here!",
    "Przyjdź szybko!",
    "He said \"hello\" and left at 10-11 o'clock.",
    "Completely different words",
    "Mam psa i trzy koty.",
]


def tokenize_13a(line):
    """sacreBLEU's TokenizerV13a."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = " {} ".format(line)
    line = re.sub(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])", r" \1 ", line)
    line = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", line)
    line = re.sub(r"([\.,])([^0-9])", r" \1 \2", line)
    line = re.sub(r"([0-9])(-)", r"\1 \2 ", line)
    return line.split()


def chrf(hyps, refs, order=6, beta=2.0):
    stats = [0.0] * (3 * order)
    for h, r in zip(hyps, refs):
        h, r = "".join(h.split()), "".join(r.split())
        for n in range(1, order + 1):
            hc = Counter(h[i:i + n] for i in range(len(h) - n + 1))
            rc = Counter(r[i:i + n] for i in range(len(r) - n + 1))
            stats[3 * (n - 1)] += sum(hc.values())
            stats[3 * (n - 1) + 1] += sum(rc.values())
            stats[3 * (n - 1) + 2] += sum((hc & rc).values())
    eps, factor = 1e-16, beta ** 2
    avg_prec = avg_rec = 0.0
    effective = 0
    for n in range(order):
        n_hyp, n_ref, n_match = stats[3 * n:3 * n + 3]
        avg_prec += n_match / n_hyp if n_hyp > 0 else eps
        avg_rec += n_match / n_ref if n_ref > 0 else eps
        effective += n_hyp > 0 and n_ref > 0
    if effective == 0:
        return 0.0
    avg_prec /= effective
    avg_rec /= effective
    if avg_prec + avg_rec == 0:
        return 0.0
    return 100 * (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec)


def bleu(hyps, refs):
    return 100 * corpus_bleu([[tokenize_13a(r)] for r in refs], [tokenize_13a(h) for h in hyps],
                             smoothing_function=SmoothingFunction().method3)


def main():
    for h in HYPOTHESES:
        print("13a:", " ".join(tokenize_13a(h)))
    print(f"BLEU all:      {bleu(HYPOTHESES, REFERENCES):.10f}")
    print(f"BLEU first 2:  {bleu(HYPOTHESES[:2], REFERENCES[:2]):.10f}")
    print(f"BLEU sentence 3: {bleu(HYPOTHESES[2:3], REFERENCES[2:3]):.10f}")
    print(f"chrF all:      {chrf(HYPOTHESES, REFERENCES):.10f}")
    print(f"chrF sentence 3: {chrf(HYPOTHESES[2:3], REFERENCES[2:3]):.10f}")
    print(f"chrF sentence 5: {chrf(HYPOTHESES[4:5], REFERENCES[4:5]):.10f}")


if __name__ == "__main__":
    main()
