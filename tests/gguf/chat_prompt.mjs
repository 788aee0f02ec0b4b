// A GGUF file's chat template and a rendered chat prompt as llama.cpp sees them (node-llama-cpp,
// pinned in package.json): the file's tokenizer.chat_template, and the prompt's tokens with its
// written-out special tokens read as tokens (llama.cpp's parse_special, what its server does
// with a chat prompt), so that tests can compare both with potop's.
//   node chat_prompt.mjs MODEL.gguf PROMPT_FILE   ->   {"chat_template": ..., "prompt_tokens": N}
import {readFileSync} from "node:fs";
import {getLlama, LlamaLogLevel, readGgufFileInfo} from "node-llama-cpp";

const [modelPath, promptFile] = process.argv.slice(2);
const info = await readGgufFileInfo(modelPath);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath, gpuLayers: 0, vocabOnly: true});
const tokens = model.tokenize(readFileSync(promptFile, "utf8"), true);
process.stdout.write(JSON.stringify({chat_template: info.metadata.tokenizer?.chat_template ?? null,
                                     prompt_tokens: tokens.length}) + "\n");
