// Streamed text equals plain text for a model whose tokens split characters (a byte tokenizer:
// every byte of "ż" or "😀" is its own token), through OpenAI's Node SDK. A chunk must never end
// inside a UTF-8 character: the server would have to send its bytes as U+FFFD, and the streamed
// text would differ from the plain text of the same seed. usage: node utf8_stream.test.mjs BASE_URL PROMPT [SEEDS]
import OpenAI from "openai";

const [base, prompt, seedCount = "100"] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0, timeout: 60000 });
const modelId = (await client.models.list()).data[0].id;
const messages = [{ role: "user", content: prompt }];
const request = { model: modelId, max_tokens: 32, temperature: 1.3 };
const wide = /[\u0080-\ufffc\ufffe-\u{10ffff}]/u;  // a character of several bytes (U+FFFD aside)

let failures = 0, withWide = 0, replaced = 0;
const show = (x) => JSON.stringify(x).slice(0, 200);
for (let seed = 0; seed < Number(seedCount); seed++) {
  const chat = await client.chat.completions.create({ ...request, messages, seed });
  let streamed = "";
  for await (const chunk of await client.chat.completions.create({ ...request, messages, seed, stream: true }))
    streamed += chunk.choices[0]?.delta?.content ?? "";
  const plain = chat.choices[0].message.content;
  if (streamed !== plain) { failures++; console.error(`FAIL: chat, seed ${seed}: streamed ${show(streamed)} plain ${show(plain)}`); }

  const completion = await client.completions.create({ ...request, prompt, seed });
  let text = "";
  for await (const chunk of await client.completions.create({ ...request, prompt, seed, stream: true }))
    text += chunk.choices[0]?.text ?? "";
  if (text !== completion.choices[0].text) {
    failures++;
    console.error(`FAIL: completions, seed ${seed}: streamed ${show(text)} plain ${show(completion.choices[0].text)}`);
  }
  if (wide.test(plain + completion.choices[0].text)) withWide++;
  if ((plain + completion.choices[0].text).includes("\ufffd")) replaced++;
}
// Not a vacuous pass: the model wrote characters of several bytes (from tokens of one byte).
if (withWide < Number(seedCount) / 2) { failures++; console.error(`FAIL: only ${withWide} seeds wrote a character of several bytes`); }
console.log(`${seedCount} seeds, chat and completions: streamed == plain (${withWide} with characters of several bytes, ` +
  `${replaced} with a stray byte, shown as U+FFFD)`);
process.exit(failures ? 1 : 0);
