// A BERT, a classifier and a translation model served by potop, through the clients users run
// (OpenAI's Node SDK, the AI SDK, LangChain). usage: node kinds.test.mjs BERT_URL CLASSIFIER_URL MT_URL
// Checks that embeddings.create works with the SDK's default (base64, decoded by the SDK) and
// with encoding_format "float", that both give the same unit vectors, that the AI SDK's embedMany
// and LangChain's OpenAIEmbeddings get them too, that models.list names the model, and that an
// endpoint the kind lacks is the SDK's BadRequestError naming the kind; and that a translation
// model answers chat.completions (streamed and not), the AI SDK and LangChain with its translation.
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { embedMany, generateText } from "ai";
import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";

const [bertUrl, classifierUrl, mtUrl] = process.argv.slice(2);
let failures = 0;
function check(name, ok, detail = "") {
  if (ok) console.log(`ok   ${name}`);
  else { failures++; console.error(`FAIL: ${name} ${detail}`); }
}
const client = (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0, timeout: 60000 });

const bert = client(bertUrl);
const models = await bert.models.list();
const model = models.data[0];
check("models.list names the BERT", models.data.length === 1 && model.meta.kind === "bert", JSON.stringify(model));

const input = ["pan zagłoba zawołał", "kmicic ruszył z kopyta"];
const packed = await bert.embeddings.create({ model: model.id, input });  // the SDK asks for base64 and decodes it
const plain = await bert.embeddings.create({ model: model.id, input, encoding_format: "float" });
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
check("embeddings.create (the SDK's base64): one unit vector per input",
  packed.data.length === 2 && packed.data.every((d) => d.embedding.length === model.meta.n_embd && Math.abs(norm(d.embedding) - 1) < 1e-5),
  JSON.stringify(packed).slice(0, 200));
check("embeddings.create with encoding_format float: the same vectors",
  plain.data.every((d, i) => d.embedding.every((x, k) => Math.abs(x - packed.data[i].embedding[k]) < 1e-6)));
check("embeddings.create: usage", packed.usage.prompt_tokens > 4 && packed.usage.total_tokens === packed.usage.prompt_tokens,
  JSON.stringify(packed.usage));

const same = (vectors) => vectors.length === 2 &&
  vectors.every((v, i) => v.every((x, k) => Math.abs(x - plain.data[i].embedding[k]) < 1e-6));
const provider = createOpenAI({ baseURL: `${bertUrl}/v1`, apiKey: "unused" });
const many = await embedMany({ model: provider.embedding(model.id), values: input, maxRetries: 0 });
check("AI SDK embedMany: the same vectors", same(many.embeddings));
const lc = new OpenAIEmbeddings({ model: model.id, apiKey: "unused", configuration: { baseURL: `${bertUrl}/v1` }, maxRetries: 0 });
check("LangChain OpenAIEmbeddings.embedDocuments: the same vectors", same(await lc.embedDocuments(input)));

try {
  await bert.completions.create({ model: model.id, prompt: "pan", max_tokens: 3 });
  check("completions of a BERT: an error", false);
} catch (e) {
  check("completions of a BERT: the SDK's BadRequestError naming the kind",
    e instanceof OpenAI.BadRequestError && /kind 'bert'/.test(e.message), `${e.constructor.name}: ${e.message}`);
}

const classifier = client(classifierUrl);
try {
  await classifier.embeddings.create({ model: "classifier", input: "pan" });
  check("embeddings of a classifier: an error", false);
} catch (e) {
  check("embeddings of a classifier: BadRequestError naming the kind",
    e instanceof OpenAI.BadRequestError && /kind 'classifier'/.test(e.message), `${e.constructor.name}: ${e.message}`);
}
// Endpoints beyond OpenAI's are one client.post away.
const labelled = await classifier.post("/classify", { body: { input: ["kmicic dobry pan", "zły zagłoba"] } });
check("client.post('/classify'): a label per text", labelled.data.length === 2 && labelled.data.every((d) => typeof d.label === "string"),
  JSON.stringify(labelled));
// A translation model: the same translation through every client.
const mt = client(mtUrl);
const mtModel = (await mt.models.list()).data[0].id;
const sentence = "pan zagłoba zawołał żywo";
const direct = await mt.completions.create({ model: mtModel, prompt: sentence });
const translation = direct.choices[0].text;
const chat = await mt.chat.completions.create({ model: mtModel, messages: [{ role: "user", content: sentence }] });
check("translation: chat.completions gives the completion's translation", chat.choices[0].message.content === translation &&
  translation.length > 0, `${chat.choices[0].message.content} / ${translation}`);
let streamed = "";
for await (const chunk of await mt.chat.completions.create({ model: mtModel, messages: [{ role: "user", content: sentence }], stream: true }))
  streamed += chunk.choices[0]?.delta?.content ?? "";
check("translation: streamed, the same", streamed === translation, streamed);
const viaAi = await generateText({ model: createOpenAI({ baseURL: `${mtUrl}/v1`, apiKey: "unused" }).chat(mtModel),
  prompt: sentence, maxRetries: 0 });
check("translation: AI SDK generateText", viaAi.text === translation, viaAi.text);
const viaLc = await new ChatOpenAI({ model: mtModel, apiKey: "unused", configuration: { baseURL: `${mtUrl}/v1` }, maxRetries: 0 })
  .invoke(sentence);
check("translation: LangChain ChatOpenAI", viaLc.content === translation, viaLc.content);
process.exit(failures ? 1 : 0);
