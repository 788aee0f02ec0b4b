// Generation speed of the same model in llama.cpp (an exported GGUF, through node-llama-cpp's
// prebuilt CPU binaries, pinned in tests/gguf) and in potop sample, greedy, on the same threads.
//
//   node bench/gguf_llama.mjs <potop> <model dir> <file.gguf> [tokens=200] [threads=1] [prompt] [prompt tokens]
//                             [kv cache=f16]
//
// prompt is text, or @FILE for a file's text; with prompt tokens > 0 it is cut to its first that
// many tokens (llama.cpp's tokenizer, which potop's export matches id for id). Both engines keep
// their KV cache in the same type: f16 (llama.cpp's default; potop sample --kv-cache f16) or f32.
// Prints one line per engine: tokens/s of the generation alone (after the first new token: the
// prompt's evaluation and the model's loading are left out), then the prompt's reading (its
// tokens over the time to the first new token, as llama.cpp's "prompt eval"); the best of 3 runs
// in one process each (potop sample --num-samples 3), the first of which is cold.
// Needs `npm ci` in tests/gguf (scripts/setup.sh --all).
import {execFileSync} from "node:child_process";
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import os from "node:os";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const {getLlama, LlamaLogLevel} = await import(path.join(here, "../tests/gguf/node_modules/node-llama-cpp/dist/index.js"));

const [potop, modelDir, gguf, tokensArg = "200", threadsArg = "1", promptArg = "Pan ", promptTokensArg = "0",
       kvCache = "f16"] = process.argv.slice(2);
if (!potop || !modelDir || !gguf || !["f16", "f32"].includes(kvCache)) {
  console.error("usage: node bench/gguf_llama.mjs <potop> <model dir> <file.gguf> [tokens] [threads] [prompt] " +
                "[prompt tokens] [kv cache: f16 or f32]");
  process.exit(2);
}
const tokens = Number(tokensArg), threads = Number(threadsArg), promptTokens = Number(promptTokensArg), runs = 3;
const config = JSON.parse(readFileSync(path.join(modelDir, "config.json"), "utf8")).model;

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: gguf, gpuLayers: 0});
let prompt = promptArg.startsWith("@") ? readFileSync(promptArg.slice(1), "utf8") : promptArg;
let ids = model.tokenize(prompt);
if (promptTokens > 0) {
  if (ids.length < promptTokens) {
    console.error(`the prompt has ${ids.length} tokens, fewer than ${promptTokens}`);
    process.exit(2);
  }
  ids = ids.slice(0, promptTokens);
  prompt = model.detokenize(ids);
}
const kvType = kvCache.toUpperCase();
const context = await model.createContext({contextSize: config.block_size, batchSize: config.block_size, threads,
                                           experimentalKvCacheKeyType: kvType, experimentalKvCacheValueType: kvType});
const sequence = context.getSequence();
let best = 0, bestPrompt = 0;
for (let run = 0; run < runs; ++run) {
  await sequence.clearHistory();
  let n = 0, start = 0;
  const began = performance.now();
  for await (const token of sequence.evaluate(ids, {temperature: 0})) {
    void token;
    if (++n === 1) {  // the first token comes with the prompt's evaluation
      start = performance.now();
      bestPrompt = Math.max(bestPrompt, ids.length / ((start - began) / 1000));
    }
    if (n === tokens + 1) break;
  }
  best = Math.max(best, tokens / ((performance.now() - start) / 1000));
}
console.log(`llama.cpp (node-llama-cpp, ${path.basename(gguf)}): ${best.toFixed(1)} tokens/s, ${threads} thread(s); ` +
            `prompt of ${ids.length} tokens: ${bestPrompt.toFixed(1)} tokens/s`);

const dir = mkdtempSync(path.join(os.tmpdir(), "potop-gguf-bench-"));
const promptFile = path.join(dir, "prompt.txt");
writeFileSync(promptFile, prompt);
// One process reading the prompt `runs` times, as llama.cpp's runs share one loaded model and context.
let out;
try {
  out = JSON.parse(execFileSync(potop, ["sample", "-m", modelDir, "--prompt-file", promptFile, "-n", String(tokens + 1),
    "--num-samples", String(runs), "--temperature", "0", "--json", "-t", String(threads), "--kv-cache", kvCache],
    {encoding: "utf8", stdio: ["ignore", "pipe", "pipe"]}));
} catch (e) {
  console.error(`potop sample failed: ${e.stderr}`);
  process.exit(1);
}
const potopBest = Math.max(...out.samples.map((s) => s.generation_tokens_per_s));
const potopPrompt = Math.max(...out.samples.map((s) => out.prompt_tokens / s.prompt_seconds));
const potopPromptTokens = out.prompt_tokens;
rmSync(dir, {recursive: true, force: true});
console.log(`potop sample (${modelDir}): ${potopBest.toFixed(1)} tokens/s, ${threads} thread(s); ` +
            `prompt of ${potopPromptTokens} tokens: ${potopPrompt.toFixed(1)} tokens/s`);
