// The reference side of bench/import.py: the real llama.cpp (node-llama-cpp, pinned here) loading a
// GGUF file and giving the first token of a one-token prompt, on one thread, as `potop sample -n 1`
// does after `potop import FILE.gguf`. Prints {"seconds": ..., "token": ...}: from before the load
// to the token.
//
//   node tests/gguf/first_token.mjs FILE.gguf CONTEXT TOKEN_ID
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [file, contextSize, tokenId] = process.argv.slice(2);
const start = performance.now();
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
const context = await model.createContext({contextSize: Number(contextSize), batchSize: 512, threads: 1});
const sequence = context.getSequence();
let first = null;
for await (const token of sequence.evaluate([Number(tokenId)], {temperature: 0})) {
  first = token;
  break;
}
console.log(JSON.stringify({seconds: (performance.now() - start) / 1000, token: first}));
await context.dispose();
await model.dispose();
