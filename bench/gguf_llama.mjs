// Generation speed of the same model in llama.cpp (an exported GGUF, through node-llama-cpp's
// prebuilt CPU binaries, pinned in tests/gguf) and in potop sample, greedy, on the same threads.
//
//   node bench/gguf_llama.mjs <potop> <model dir> <file.gguf> [tokens=200] [threads=1] [prompt]
//
// Prints one line per engine: tokens/s of the generation alone (the prompt's evaluation and the
// model's loading are left out), the best of 3 runs. Needs `npm ci` in tests/gguf
// (scripts/setup.sh --all).
import {execFileSync} from "node:child_process";
import {readFileSync} from "node:fs";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const {getLlama, LlamaLogLevel} = await import(path.join(here, "../tests/gguf/node_modules/node-llama-cpp/dist/index.js"));

const [potop, modelDir, gguf, tokensArg = "200", threadsArg = "1", prompt = "Pan "] = process.argv.slice(2);
if (!potop || !modelDir || !gguf) {
  console.error("usage: node bench/gguf_llama.mjs <potop> <model dir> <file.gguf> [tokens] [threads] [prompt]");
  process.exit(2);
}
const tokens = Number(tokensArg), threads = Number(threadsArg), runs = 3;
const config = JSON.parse(readFileSync(path.join(modelDir, "config.json"), "utf8")).model;

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: gguf, gpuLayers: 0});
const context = await model.createContext({contextSize: config.block_size, batchSize: config.block_size, threads});
const sequence = context.getSequence();
const ids = model.tokenize(prompt);
let best = 0;
for (let run = 0; run < runs; ++run) {
  await sequence.clearHistory();
  let n = 0, start = 0;
  for await (const token of sequence.evaluate(ids, {temperature: 0})) {
    void token;
    if (++n === 1) start = performance.now();  // the first token comes with the prompt's evaluation
    if (n === tokens + 1) break;
  }
  best = Math.max(best, tokens / ((performance.now() - start) / 1000));
}
console.log(`llama.cpp (node-llama-cpp, ${path.basename(gguf)}): ${best.toFixed(0)} tokens/s, ${threads} thread(s)`);

let potopBest = 0;
for (let run = 0; run < runs; ++run) {
  let out;
  try {
    out = JSON.parse(execFileSync(potop, ["sample", "-m", modelDir, "-p", prompt, "-n", String(tokens), "--temperature",
      "0", "--json", "-t", String(threads)], {encoding: "utf8", stdio: ["ignore", "pipe", "pipe"]}));
  } catch (e) {
    console.error(`potop sample failed: ${e.stderr}`);
    process.exit(1);
  }
  potopBest = Math.max(potopBest, out.tokens_per_s);
}
console.log(`potop sample (${modelDir}, f32): ${potopBest.toFixed(0)} tokens/s, ${threads} thread(s)`);
