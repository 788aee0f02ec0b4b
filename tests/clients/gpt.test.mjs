// A GPT served by potop, through the clients users point at it, pinned in package.json:
// OpenAI's Node SDK, the Vercel AI SDK (ai + @ai-sdk/openai: its default provider, which speaks the
// Responses API, and its .chat() and .completion() providers) and LangChain's ChatOpenAI. usage: node gpt.test.mjs BASE_URL MODEL_ID PROMPT
// Checks chat and completions, streamed and not, that a seed read back and re-sent gives the same
// text, that the three clients agree on the same request, that errors carry their code, and that
// a request the client aborts stops its generation.
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { ChatOpenAI } from "@langchain/openai";

const [base, modelId, prompt] = process.argv.slice(2);
let failures = 0;
function check(name, ok, detail = "") {
  if (ok) console.log(`ok   ${name}`);
  else { failures++; console.error(`FAIL: ${name} ${detail}`); }
}
const show = (x) => JSON.stringify(x).slice(0, 300);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0, timeout: 60000 });
const messages = [{ role: "user", content: prompt }];

// --- OpenAI's SDK
const model = await client.models.retrieve(modelId);
check("models.retrieve", model.id === modelId, show(model));

const chat = await client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 24, temperature: 0.9, seed: 11 });
const content = chat.choices[0].message.content;
check("chat.completions.create", typeof content === "string" && content.length > 0 && chat.choices[0].finish_reason === "length" &&
  chat.usage.completion_tokens === 24, show(chat));

const stream = await client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 24, temperature: 0.9,
  seed: 11, stream: true, stream_options: { include_usage: true } });
let streamed = "", usage = null, seeds = new Set();
for await (const chunk of stream) {
  streamed += chunk.choices[0]?.delta?.content ?? "";
  if (chunk.usage) usage = chunk.usage;
  seeds.add(chunk.seed);
}
check("chat streamed: the same text, the usage last, the seed in every chunk", streamed === content &&
  usage?.completion_tokens === 24 && seeds.size === 1 && seeds.has(11), `${show(streamed)} ${show(usage)} ${[...seeds]}`);

const random = await client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 24, temperature: 1.2 });
const again = await client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 24, temperature: 1.2,
  seed: random.seed });
check("a random seed read back and re-sent gives the same text", Number.isSafeInteger(random.seed) &&
  again.choices[0].message.content === random.choices[0].message.content, `${random.seed}`);

const completion = await client.completions.create({ model: modelId, prompt, max_tokens: 24, temperature: 0.9, seed: 11, logprobs: 2 });
const lp = completion.choices[0].logprobs;
check("completions.create with logprobs", lp.tokens.join("") === completion.choices[0].text && lp.tokens.length === 24,
  show(completion));
let text = "";
for await (const chunk of await client.completions.create({ model: modelId, prompt, max_tokens: 24, temperature: 0.9, seed: 11, stream: true }))
  text += chunk.choices[0]?.text ?? "";
check("completions streamed: the same text", text === completion.choices[0].text, show(text));

const withLogprobs = await client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 8, seed: 1,
  logprobs: true, top_logprobs: 3 });
check("chat logprobs", withLogprobs.choices[0].logprobs.content.length === 8 &&
  withLogprobs.choices[0].logprobs.content.every((c) => c.top_logprobs.length === 3), show(withLogprobs.choices[0].logprobs));

async function error(call) {
  try { await call(); } catch (e) { return e; }
  return null;
}
let e = await error(() => client.chat.completions.create({ model: "gpt-4o", messages }));
check("an unknown model: NotFoundError, code model_not_found", e instanceof OpenAI.NotFoundError && e.code === "model_not_found",
  `${e?.constructor?.name} ${e?.code} ${e?.message}`);
e = await error(() => client.chat.completions.create({ model: modelId, messages, temperature: -1 }));
check("a bad field: BadRequestError naming it", e instanceof OpenAI.BadRequestError && e.param === "temperature" && "code" in e,
  `${e?.constructor?.name} ${e?.param} ${e?.message}`);
e = await error(() => client.chat.completions.create({ model: modelId, messages, tools: [{ type: "function", function: { name: "f" } }] }));
check("tools: BadRequestError", e instanceof OpenAI.BadRequestError && e.param === "tools", `${e?.constructor?.name} ${e?.message}`);

// --- the Vercel AI SDK: chat and completion providers
const provider = createOpenAI({ baseURL: `${base}/v1`, apiKey: "unused" });
const viaChat = await generateText({ model: provider.chat(modelId), prompt, maxOutputTokens: 24, temperature: 0.9, seed: 11, maxRetries: 0 });
check("AI SDK generateText (.chat): the OpenAI SDK's text for the same request", viaChat.text === content &&
  viaChat.finishReason === "length" && viaChat.usage.outputTokens === 24, `${show(viaChat.text)} ${viaChat.finishReason}`);
const streamedText = streamText({ model: provider.chat(modelId), prompt, maxOutputTokens: 24, temperature: 0.9, seed: 11, maxRetries: 0 });
let parts = "";
for await (const part of streamedText.textStream) parts += part;
check("AI SDK streamText (.chat): the same text", parts === content, show(parts));
const viaCompletion = await generateText({ model: provider.completion(modelId), prompt, maxOutputTokens: 24, temperature: 0.9,
  seed: 11, maxRetries: 0 });
// It writes the conversation as "user:\n..." itself: the same prompt through the OpenAI SDK.
const body = viaCompletion.request.body;
const sent = (typeof body === "string" ? JSON.parse(body) : body).prompt;
const direct = await client.completions.create({ model: modelId, prompt: sent, max_tokens: 24, temperature: 0.9, seed: 11 });
check("AI SDK generateText (.completion): the text of its prompt through /v1/completions",
  viaCompletion.text === direct.choices[0].text && viaCompletion.text.length > 0, `${show(sent)} ${show(viaCompletion.text)}`);

// The AI SDK's default provider speaks the Responses API (/v1/responses), which has no seed:
// compared greedily (temperature 0) with the chat's greedy text.
const greedy = (await client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 24, temperature: 0 }))
  .choices[0].message.content;
const viaResponses = await generateText({ model: provider(modelId), prompt, maxOutputTokens: 24, temperature: 0, maxRetries: 0 });
check("AI SDK generateText (the default provider, Responses API): the chat's text", viaResponses.text === greedy &&
  viaResponses.usage.outputTokens === 24, `${show(viaResponses.text)} ${viaResponses.finishReason}`);
let responseParts = "";
for await (const part of streamText({ model: provider(modelId), prompt, maxOutputTokens: 24, temperature: 0, maxRetries: 0 })
  .textStream) responseParts += part;
check("AI SDK streamText (the default provider): the same text", responseParts === greedy, show(responseParts));
const response = await client.responses.create({ model: modelId, input: prompt, max_output_tokens: 24, temperature: 0 });
check("OpenAI SDK responses.create: output_text", response.output_text === greedy, show(response.output_text));

// --- LangChain
const lc = new ChatOpenAI({ model: modelId, apiKey: "unused", configuration: { baseURL: `${base}/v1` }, temperature: 0.9,
  maxTokens: 24, maxRetries: 0, modelKwargs: { seed: 11 } });
const answer = await lc.invoke(prompt);
check("LangChain ChatOpenAI.invoke: the same text", answer.content === content, show(answer.content));
let lcStreamed = "";
for await (const chunk of await lc.stream(prompt)) lcStreamed += chunk.content;
check("LangChain ChatOpenAI.stream: the same text", lcStreamed === content, show(lcStreamed));

// --- A request the client aborts (the SDK's `signal`): not streamed, its generation (of up to
// 200,000 tokens: the server runs with --max-tokens 200000) stops, counted in /metrics as
// cancelled, and the slot is free again.
const metric = async (name) => Number((await (await fetch(`${base}/metrics`)).text())
  .match(new RegExp(`^${name} (\\d+)`, "m"))?.[1]);
const cancelledBefore = await metric("potop_generations_cancelled_total");
const aborter = new AbortController();
const aborted = client.chat.completions.create({ model: modelId, messages, max_completion_tokens: 200000, temperature: 0.9 },
  { signal: aborter.signal }).then(() => "answered", (e) => e.name);
setTimeout(() => aborter.abort(), 300);
const outcome = await aborted;
let cancelled = false;
for (let i = 0; i < 50 && !cancelled; i++) {
  await new Promise((r) => setTimeout(r, 100));
  cancelled = (await metric("potop_generations_cancelled_total")) === cancelledBefore + 1 &&
    (await metric("potop_slots_busy")) === 0;
}
check("an aborted plain request (the SDK's signal) stops its generation", outcome !== "answered" && cancelled,
  `${outcome}, cancelled ${await metric("potop_generations_cancelled_total")} (was ${cancelledBefore})`);

process.exit(failures ? 1 : 0);
