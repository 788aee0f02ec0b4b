"""Helpers of tests/cli/word2vec.sh, run with Debian's /usr/bin/python3 (gensim 4.2).

    word2vec.py corpus FILE                   a synthetic corpus: 10 topics, the pair a<i>/b<i>
                                              in identical contexts
    word2vec.py analogies FILE                questions over that corpus's words
    word2vec.py similar VECTORS WORD K        gensim's most_similar, "word<TAB>cosine" lines
    word2vec.py check-similar TXT BIN POTOP_OUT WORD   gensim loads both files; their cosines for
                                              the words potop printed equal potop's to 1e-5
    word2vec.py evaluate VECTORS QUESTIONS    gensim's evaluate_word_analogies(30000, case
                                              insensitive) as the JSON potop prints (counts)
"""
import json
import random
import sys


def corpus(path):
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(300):
            for t in range(10):
                words = [f"ctx{t}_{rng.randrange(4)}" for _ in range(6)]
                words.insert(3, rng.choice("ab") + str(t))
                f.write(" ".join(words) + "\n")


def analogies(path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(": pairs\n")
        for i in range(10):
            j = (i + 3) % 10
            f.write(f"A{i} b{i} a{j} B{j}\n")
        f.write("a1 b1 unknown words\n")
        f.write("this line is malformed, five words\n")
        f.write(": contexts\n")
        for i in range(10):
            f.write(f"ctx{i}_0 ctx{i}_1 ctx{(i + 1) % 10}_0 ctx{(i + 1) % 10}_1\n")


def load(path):
    from gensim.models import KeyedVectors
    return KeyedVectors.load_word2vec_format(path, binary=path.endswith(".bin"))


def check_similar(txt, binary, potop_out, word):
    kvs = [load(txt), load(binary)]
    lines = [l.split("\t") for l in open(potop_out, encoding="utf-8").read().splitlines()]
    assert lines, "potop printed no neighbours"
    worst = 0.0
    for kv in kvs:
        expected = kv.most_similar(word, topn=len(lines))
        for (w, cos), (gw, gcos) in zip(lines, expected):
            worst = max(worst, abs(float(cos) - kv.similarity(word, w)))
            assert w == gw or abs(float(cos) - gcos) < 1e-5, f"rank differs: potop {w} {cos}, gensim {gw} {gcos}"
    print(f"max |potop cosine - gensim cosine| = {worst:.2e}")
    assert worst < 1e-5, worst


def evaluate(vectors, questions):
    kv = load(vectors)
    _, sections = kv.evaluate_word_analogies(questions, restrict_vocab=30000, case_insensitive=True)
    print(json.dumps([[s["section"], len(s["correct"]), len(s["incorrect"])] for s in sections]))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"corpus": corpus, "analogies": analogies, "check-similar": check_similar, "evaluate": evaluate}[cmd](*args)
