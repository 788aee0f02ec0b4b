// The reference renderings of the chat-template corpus (tests/chat/cases/*.json): every context of
// every case rendered by Hugging Face's Jinja in JavaScript (npm @huggingface/jinja, pinned in
// tests/chat/package.json), `new Template(template).render(context)`, the renderer potop
// chat-template must equal byte for byte (tests/cli/chat_template.sh).
//
//   node tests/chat/render_reference.mjs OUTDIR [CASE...]
//
// A case file is {"name", "source", "template", "contexts": [...], optional "potop_unsupported"}.
// A context is an object holding all the template's variables, or an array (the messages alone).
// Writes, for a case NAME (the file's name, which must equal its "name"):
//   OUTDIR/NAME.jinja                  the template, as it is
//   OUTDIR/NAME.tokenizer_config.json  {"chat_template": the template}
//   OUTDIR/NAME.unsupported            the potop_unsupported reason, when the case has one
//   OUTDIR/NAME.I.json                 context I, its exact text in the case file
//   OUTDIR/NAME.I.expected             the rendering, exact bytes (UTF-8), or, when JavaScript throws,
//   OUTDIR/NAME.I.error                its message
// CASE... limits it to those case names. Exit 1 when a case file is malformed.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";

const here = path.dirname(fileURLToPath(import.meta.url));
const casesDir = path.join(here, "cases");

// The exact source text of each element of the top-level "contexts" array, so that the context potop
// reads is the very text the reference parsed (a 1.0 stays 1.0, an escape stays an escape).
function rawContexts(text, file) {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i])) i++;
  };
  const skipString = () => {
    if (text[i] !== '"') throw new Error(`${file}: expected a string at offset ${i}`);
    for (i++; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === '"') return void i++;
    }
    throw new Error(`${file}: unterminated string`);
  };
  const skipValue = () => {
    ws();
    if (text[i] === '"') return skipString();
    if (text[i] === "{" || text[i] === "[") {
      const close = text[i] === "{" ? "}" : "]";
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (close === "}") {
          ws();
          skipString();
          ws();
          if (text[i++] !== ":") throw new Error(`${file}: expected ':' at offset ${i - 1}`);
        }
        skipValue();
        ws();
        const c = text[i++];
        if (c === close) return;
        if (c !== ",") throw new Error(`${file}: expected ',' or '${close}' at offset ${i - 1}`);
      }
    }
    while (i < text.length && !",]} \t\r\n".includes(text[i])) i++; // number, true, false, null
  };
  ws();
  if (text[i++] !== "{") throw new Error(`${file}: not a JSON object`);
  for (;;) {
    ws();
    const keyStart = i;
    skipString();
    const key = JSON.parse(text.slice(keyStart, i));
    ws();
    i++; // ':'
    ws();
    if (key !== "contexts") {
      skipValue();
    } else {
      if (text[i++] !== "[") throw new Error(`${file}: "contexts" is not an array`);
      const raws = [];
      ws();
      if (text[i] === "]") return raws;
      for (;;) {
        ws();
        const start = i;
        skipValue();
        raws.push(text.slice(start, i));
        ws();
        const c = text[i++];
        if (c === "]") return raws;
        if (c !== ",") throw new Error(`${file}: expected ',' or ']' in "contexts" at offset ${i - 1}`);
      }
    }
    ws();
    if (text[i++] !== ",") throw new Error(`${file}: no "contexts" array`);
  }
}

function main() {
  const [outDir, ...only] = process.argv.slice(2);
  if (!outDir) {
    console.error("usage: node render_reference.mjs OUTDIR [CASE...]");
    process.exit(2);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const files = fs.readdirSync(casesDir).filter((f) => f.endsWith(".json")).sort();
  let cases = 0, contexts = 0, errors = 0, bad = 0;
  for (const file of files) {
    const name = file.slice(0, -".json".length);
    if (only.length && !only.includes(name)) continue;
    const text = fs.readFileSync(path.join(casesDir, file), "utf8");
    let c, raws;
    try {
      c = JSON.parse(text);
      raws = rawContexts(text, file);
      if (c.name !== name) throw new Error(`${file}: "name" is ${JSON.stringify(c.name)}, not the file's name`);
      if (typeof c.source !== "string" || !c.source) throw new Error(`${file}: no "source"`);
      if (typeof c.template !== "string") throw new Error(`${file}: "template" is not a string`);
      if (!Array.isArray(c.contexts) || c.contexts.length === 0) throw new Error(`${file}: no "contexts"`);
      if (raws.length !== c.contexts.length) throw new Error(`${file}: found ${raws.length} contexts, not ${c.contexts.length}`);
      raws.forEach((raw, k) => {
        if (JSON.stringify(JSON.parse(raw)) !== JSON.stringify(c.contexts[k])) throw new Error(`${file}: context ${k} misread`);
        if (typeof c.contexts[k] !== "object" || c.contexts[k] === null) throw new Error(`${file}: context ${k} is neither an object nor an array`);
      });
      if ("potop_unsupported" in c && (typeof c.potop_unsupported !== "string" || !c.potop_unsupported)) {
        throw new Error(`${file}: "potop_unsupported" must say why`);
      }
    } catch (e) {
      console.error(`render_reference: ${e.message}`);
      bad++;
      continue;
    }
    cases++;
    const base = path.join(outDir, name);
    fs.writeFileSync(`${base}.jinja`, c.template);
    fs.writeFileSync(`${base}.tokenizer_config.json`, JSON.stringify({ chat_template: c.template }, null, 2) + "\n");
    if (c.potop_unsupported) fs.writeFileSync(`${base}.unsupported`, c.potop_unsupported + "\n");
    let template = null, parseError = null;
    try {
      template = new Template(c.template);
    } catch (e) {
      parseError = e;
    }
    raws.forEach((raw, k) => {
      contexts++;
      fs.writeFileSync(`${base}.${k}.json`, raw + "\n");
      const context = JSON.parse(raw);
      try {
        if (parseError) throw parseError;
        const out = template.render(Array.isArray(context) ? { messages: context, add_generation_prompt: true } : context);
        fs.writeFileSync(`${base}.${k}.expected`, out);
      } catch (e) {
        errors++;
        fs.writeFileSync(`${base}.${k}.error`, `${e?.name ?? "Error"}: ${e?.message ?? e}\n`);
      }
    });
  }
  console.log(`render_reference: ${cases} cases, ${contexts} contexts rendered by @huggingface/jinja (${errors} of them throw)`);
  if (bad) process.exit(1);
}

main();
