// Hugging Face's tokenizers in JavaScript (npm's @huggingface/tokenizers, pinned in package.json)
// running a tokenizer.json: the reference tests/cli/tokenizers_bert.sh compares potop's
// wordpiece tokenizer with, and tests/cli/tokenizers_gpt2.sh the tokenizer.json of a GPT-2 export.
//   node hf_tokenizer_reference.mjs encode DIR FILE   the whole file as one text -> its ids on one
//                                                     line (add_special_tokens false: no [CLS]/[SEP])
//   node hf_tokenizer_reference.mjs decode DIR FILE   a line of ids -> the text (specials kept)
// DIR holds tokenizer.json and tokenizer_config.json.
import fs from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

const [mode, dir, file] = process.argv.slice(2);
if (!["encode", "decode"].includes(mode) || !dir || !file) {
  console.error("usage: node hf_tokenizer_reference.mjs encode|decode DIR FILE");
  process.exit(2);
}
const read = (name) => JSON.parse(fs.readFileSync(`${dir}/${name}`, "utf-8"));
const tokenizer = new Tokenizer(read("tokenizer.json"), read("tokenizer_config.json"));
if (mode === "encode") {
  const text = fs.readFileSync(file, "utf-8");
  process.stdout.write(tokenizer.encode(text, { add_special_tokens: false }).ids.join(" ") + "\n");
} else {
  const ids = fs.readFileSync(file, "utf-8").trim().split(/\s+/).filter((s) => s.length).map(Number);
  process.stdout.write(ids.length ? tokenizer.decode(ids) : "");
}
