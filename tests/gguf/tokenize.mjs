// llama.cpp's tokenizer (node-llama-cpp, pinned in package.json) on a GGUF file's vocabulary:
// each line of FILE (without its newline) -> one line of ids, as `potop tokenizer encode` prints
// them, so that tests can compare the two on the tokenizer potop exported.
//   node tokenize.mjs MODEL.gguf FILE
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, file] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath, gpuLayers: 0, vocabOnly: true});
const lines = readFileSync(file, "utf8").split("\n");
if (lines.at(-1) === "") lines.pop();
process.stdout.write(lines.map((line) => model.tokenize(line.replace(/\r$/, ""), false).join(" ")).join("\n") + "\n");
