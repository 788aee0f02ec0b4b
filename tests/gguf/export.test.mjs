// What `potop export --format gguf` writes, loaded by the real llama.cpp (node-llama-cpp's prebuilt
// binaries, pinned in package.json), CPU only, against potop itself on the same model:
//   - the same token ids for the prompt and for every line of a text sample (potop tokenizer encode)
//   - next-token log-probabilities within 1e-3 of potop serve's at f32
//   - the same greedy continuation of 200 tokens (potop sample --temperature 0), at f32, and for
//     each --greedy TYPE=DIR the TYPE file's against potop's model DIR (potop quantize's, say)
//   - the files of the other types (--loads, f16 and q8_0 unless given) load and generate
//
//   node export.test.mjs <potop> <model dir> <dir of f32.gguf, f16.gguf, ...> <serve url> <prompt> <lines file>
//                        [--greedy TYPE=DIR]... [--loads TYPE,TYPE...]
import {execFileSync} from "node:child_process";
import {readFileSync} from "node:fs";
import path from "node:path";
import test from "node:test";
import assert from "node:assert/strict";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const [potop, modelDir, ggufDir, serveUrl, prompt, linesFile, ...options] = process.argv.slice(2);
const CONTINUATION = 200;
const greedyModels = [["f32", modelDir]];  // [type, the potop model its continuation must be]
let loadTypes = ["f16", "q8_0"];
for (let i = 0; i < options.length; i += 2) {
  const [flag, value] = [options[i], options[i + 1]];
  if (flag === "--greedy" && value?.includes("=")) greedyModels.push(value.split("=", 2));
  else if (flag === "--loads" && value) loadTypes = value.split(",");
  else throw new Error(`unknown option ${flag} ${value ?? ""}: --greedy TYPE=DIR or --loads TYPE,TYPE`);
}

const potopIds = (text) =>
  execFileSync(potop, ["tokenizer", "encode", "-t", modelDir], {input: text, encoding: "utf8"})
    .trim().split(/\s+/).filter(Boolean).map(Number);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const blockSize = JSON.parse(readFileSync(path.join(modelDir, "config.json"), "utf8")).model.block_size;

async function load(type) {
  const model = await llama.loadModel({modelPath: path.join(ggufDir, `${type}.gguf`), gpuLayers: 0});
  const context = await model.createContext({contextSize: blockSize, batchSize: blockSize, threads: 1});
  return {model, context, sequence: context.getSequence()};
}

// The next token's probabilities over the whole vocabulary after `ids`.
async function nextProbabilities(sequence, ids) {
  await sequence.clearHistory();
  const input = ids.map((id, i) => i < ids.length - 1 ? id :
    [id, {generateNext: {probabilities: true, options: {temperature: 1, topK: 0, topP: 1, minP: 0}}}]);
  const out = await sequence.controlledEvaluate(input);
  return out[ids.length - 1].next.probabilities;
}

// n greedy tokens after `ids`.
async function greedy(sequence, ids, n) {
  await sequence.clearHistory();
  const tokens = [];
  for await (const token of sequence.evaluate(ids, {temperature: 0})) {
    tokens.push(token);
    if (tokens.length === n) break;
  }
  return tokens;
}

const f32 = await load("f32");
const promptIds = potopIds(prompt);

test("the vocabulary and the prompt's ids are potop's", () => {
  assert.deepEqual(f32.model.tokenize(prompt), promptIds);
});

test("every line of the sample tokenizes to potop's ids", () => {
  const lines = readFileSync(linesFile, "utf8").split("\n").filter((l) => l.length > 0);
  assert.ok(lines.length > 0);
  for (const line of lines) assert.deepEqual(f32.model.tokenize(line), potopIds(line), `line: ${line}`);
});

test("next-token log-probabilities within 1e-3 of potop's (f32)", async () => {
  const response = await fetch(`${serveUrl}/v1/completions`, {
    method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({prompt, max_tokens: 1, temperature: 0, logprobs: 20}),
  });
  assert.equal(response.status, 200);
  const top = (await response.json()).choices[0].logprobs.top_logprobs[0];
  const probabilities = await nextProbabilities(f32.sequence, promptIds);
  // potop names each alternative by its text: compare those whose text is one token's alone.
  const byText = new Map();
  for (const id of probabilities.keys()) {
    const text = f32.model.detokenize([id]);
    byText.set(text, byText.has(text) ? -1 : id);
  }
  let compared = 0, worst = 0;
  for (const [text, logprob] of Object.entries(top)) {
    const id = byText.get(text);
    if (id === undefined || id < 0) continue;
    const p = probabilities.get(id) ?? 0;
    const diff = Math.abs(Math.log(p) - logprob);
    worst = Math.max(worst, diff);
    assert.ok(diff < 1e-3, `token ${id} ${JSON.stringify(text)}: llama.cpp ${Math.log(p)}, potop ${logprob}`);
    ++compared;
  }
  console.log(`# compared ${compared} log-probabilities, largest difference ${worst.toExponential(2)}`);
  assert.ok(compared >= Math.min(10, Object.keys(top).length - 2), `only ${compared} compared`);
});

for (const [type, potopModel] of greedyModels) {
  const name = path.basename(potopModel);
  test(`the same greedy continuation of ${CONTINUATION} tokens (${type}, potop's ${name})`, async () => {
    const out = JSON.parse(execFileSync(potop, ["sample", "-m", potopModel, "-p", prompt, "-n", String(CONTINUATION),
      "--temperature", "0", "--json", "-t", "1"], {encoding: "utf8", stdio: ["ignore", "pipe", "ignore"]}));
    const potopText = out.samples[0].text;
    const m = type === "f32" ? f32 : await load(type);
    const tokens = await greedy(m.sequence, promptIds, CONTINUATION);
    assert.equal(tokens.length, CONTINUATION);
    assert.equal(prompt + m.model.detokenize(tokens), potopText);
    console.log(`# ${type}: the same ${CONTINUATION}-token greedy continuation as potop's ${name}`);
    if (m !== f32) {
      await m.context.dispose();
      await m.model.dispose();
    }
  });
}

for (const type of loadTypes) {
  test(`the ${type} file loads and generates`, async () => {
    const m = await load(type);
    const tokens = await greedy(m.sequence, promptIds, 50);
    assert.equal(tokens.length, 50);
    const probabilities = await nextProbabilities(m.sequence, promptIds);
    const reference = await nextProbabilities(f32.sequence, promptIds);
    let worst = 0;
    for (const [id, p] of reference) if (p > 1e-3) worst = Math.max(worst, Math.abs(Math.log(probabilities.get(id)) - Math.log(p)));
    console.log(`# ${type}: largest log-probability difference from f32 (p > 1e-3): ${worst.toExponential(2)}`);
    assert.ok(worst < 0.5);
    await m.context.dispose();
    await m.model.dispose();
  });
}
