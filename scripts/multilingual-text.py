#!/usr/bin/env python3
"""Deterministic multilingual text for tokenizer tests and benchmarks: sentences of made-up words
from Polish, Russian, Chinese and English syllables, digits, punctuation and emoji, one a line.

    multilingual-text.py <bytes> [seed] > text

Made-up words from syllables give a Zipf-like spread of frequent and rare words, which is what a
subword tokenizer needs to learn something, without committing a corpus to the repository.
"""
import random
import sys

SYLLABLES = {
    "pl": ["prze", "szcz", "rz", "ąb", "ęś", "ła", "ży", "ść", "ko", "mi", "cic", "wa", "nie", "dź", "ój", "ta"],
    "ru": ["при", "вет", "мир", "щи", "жё", "лый", "ст", "ра", "ны", "ть", "ся", "ков", "ёж", "эх", "юг", "ша"],
    "zh": ["我", "能", "吞", "下", "玻", "璃", "而", "不", "伤", "身", "体", "中", "文", "字", "的", "是"],
    "en": ["the", "qu", "ick", "br", "own", "fox", "ju", "mps", "ov", "er", "la", "zy", "dog", "ing", "ed", "s"],
}
PUNCT = [",", ".", "!", "?", ";", ":", " —", "…"]
EMOJI = ["😀", "🎉", "👍🏽", "❤️", "🇵🇱", "👨‍👩‍👧"]


def main():
    size = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    # A fixed lexicon per language, drawn with Zipf-like weights: frequent and rare words.
    lexicon = {}
    for lang, syl in SYLLABLES.items():
        words = ["".join(rng.choice(syl) for _ in range(rng.randint(1, 4))) for _ in range(1500)]
        lexicon[lang] = (words, [1.0 / (i + 1) for i in range(len(words))])
    out, total = [], 0
    while total < size:
        lang = rng.choice(list(SYLLABLES))
        words, weights = lexicon[lang]
        sentence = rng.choices(words, weights, k=rng.randint(3, 14))
        if rng.random() < 0.3:
            sentence[0] = sentence[0].capitalize()
        if rng.random() < 0.2:
            sentence.insert(rng.randrange(len(sentence)), str(rng.randint(0, 99999)))
        if rng.random() < 0.1:
            sentence.append(rng.choice(EMOJI))
        sep = "" if lang == "zh" and rng.random() < 0.7 else " "
        line = sep.join(sentence) + rng.choice(PUNCT)
        out.append(line)
        total += len(line.encode()) + 1
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
