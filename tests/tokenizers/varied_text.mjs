// A text of many scripts and shapes for comparing tokenizers with their references, the same on
// every run (a fixed-seed mix of the fragments below): English, Polish, Russian, Greek, Arabic,
// Hebrew, Hindi, Chinese, Japanese, Korean and Thai; emoji with skin tones, ZWJ sequences and
// flags; combining accents; digits of several scripts; code with tabs and indentation; runs of
// every kind of whitespace (tabs, \v, \f, CR LF, NBSP, U+2028, U+3000, U+FEFF, U+0085, U+001C),
// contractions in both cases, and punctuation runs.
//   node varied_text.mjs BYTES [--js-whitespace] > FILE
// --js-whitespace leaves out U+0085 and U+FEFF, the two characters JavaScript's \s and Unicode's
// White_Space disagree on (byte_bpe_tokenizer.h), for comparing with gpt-3-encoder.
const fragments = [
  "The quick brown fox jumps over the lazy dog. ", "It's what they'd've done; we'll see, I'm sure you're right. ",
  "IT'S HE'LL WE'VE THEY'RE I'M YOU'D ", "Zażółć gęślą jaźń! Pan Kmicic rzekł: — Nie może być… ",
  "Съешь же ещё этих мягких французских булок, да выпей чаю. ", "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. ",
  "نص حكيم له سر قاطع وذو شأن عظيم ", "דג סקרן שט בים מאוכזב ", "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा ",
  "我能吞下玻璃而不伤身体。", "いろはにほへと ちりぬるを。カタカナ、ひらがな！", "다람쥐 헌 쳇바퀴에 타고파 ",
  "เป็นมนุษย์สุดประเสริฐเลิศคุณค่า ", "👍🏽 👨‍👩‍👧‍👦 🇵🇱🇺🇦 🎉🎉🎉 ❤️‍🔥 ", "e\u0301te\u0301 cafe\u0301 n\u0303 ",
  "0123456789 ٠١٢٣٤٥٦٧٨٩ ०१२३ ½ ¾ Ⅻ 3.14159 1,000,000 ", "def f(x):\n\treturn x ** 2  # square\n\n",
  "int main() {\n    std::vector<int> v{1, 2, 3};\n    return v.size() > 2 ? 0 : 1;\n}\n",
  "   ", "\t\t", "\n\n\n", "\r\n", " \n ", "\u000b\u000c", "\u00a0\u00a0", "\u2028", "\u3000", "\ufeff", "\u0085", "\u001c",
  "!!! ??? ... --- *** ''' \"\"\" ", "<|endoftext|>", "http://example.com/path?query=1&b=2 ", "user@example.org ",
  "$100 €50 £3 ¥7 ", "The end.\nA new line; ", "Koniec.\r\nNowy wiersz ", "∀x∈ℝ: x² ≥ 0 ", "'s't're've'm'll'd", "'S'T'RE ", "\u200d\u200c", "\ud83d\ude00 ",
];
const bytes = Number(process.argv[2] ?? 1000000);
const pool = process.argv[3] === "--js-whitespace" ? fragments.filter((f) => !/[\u0085\ufeff]/u.test(f)) : fragments;
let seed = 12345, out = "", size = 0;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
while (size < bytes) {
  const f = pool[next() % pool.length];
  out += f;
  size += Buffer.byteLength(f);
}
process.stdout.write(out);
