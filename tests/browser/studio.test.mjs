// The web studio in a real browser: Debian's chromium driven by playwright-core (no browser
// download). usage: node studio.test.mjs BASE_URL SCREENSHOT_DIR [KEY_URL KEY]
// Checks that the page loads, a completion streams into the playground with coloured tokens and
// hover alternatives, clicking a token in the attention view draws its lines, the heat map and
// the surprisal view render; writes screenshots for the README.
import { check, withChromium } from "./harness.mjs";

const [base, shots, keyUrl, key] = process.argv.slice(2);

await withChromium(async (browser, page, errors) => {
  await page.goto(base + "/");
  await page.waitForFunction(() => document.getElementById("model-name").textContent.includes("layers"));
  check("page loads and names the model", true);

  // Playground: a streamed completion, token by token.
  await page.evaluate(() => {
    window.__batches = 0;
    new MutationObserver(() => window.__batches++).observe(document.getElementById("output"), { childList: true });
  });
  await page.fill("#prompt", "pan zagłoba ");
  await page.fill("#max_tokens", "600");
  await page.fill("#seed", "3");
  await page.click("#generate");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("tokens in"), null, { timeout: 30000 });
  const status = await page.textContent("#status");
  const spans = await page.locator("#output .tok").count();
  const batches = await page.evaluate(() => window.__batches);
  check("a completion streams in (600 tokens, more than one update)", spans === 600 && batches > 1, `${spans} spans, ${batches} updates, ${status}`);
  const coloured = await page.locator("#output .tok").first().evaluate((e) => e.style.background !== "");
  check("tokens are coloured by probability", coloured);
  await page.fill("#max_tokens", "60");
  await page.click("#generate");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("60 tokens in"));
  await page.locator("#output .tok").nth(7).hover();
  const tip = await page.textContent("#tooltip");
  check("hover shows the alternatives with probabilities", (await page.isVisible("#tooltip")) && /%/.test(tip), tip);
  await page.screenshot({ path: `${shots}/studio-playground.png` });

  // A random generation shows its seed; that seed gives the same text again.
  const outputText = () => page.locator("#output .tok").allTextContents().then((t) => t.join(""));
  await page.fill("#seed", "");
  await page.fill("#max_tokens", "40");
  await page.click("#generate");
  await page.waitForFunction(() => /seed \d+/.test(document.getElementById("status").textContent));
  const shown = (await page.textContent("#status")).match(/seed (\d+)/)[1];
  const first = await outputText();
  await page.fill("#seed", shown);
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.click("#generate");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("seed"));
  check("the seed shown reproduces the text", (await outputText()) === first && first.length === 40, `${shown}: ${first}`);
  // A stop string: the tokens shown end where the text does, the stop not among them.
  // (two characters without a newline: a text input drops newlines)
  let at = 10;
  while (first.slice(at, at + 2).includes("\n")) at++;
  const stop = first.slice(at, at + 2);
  await page.fill("#stop", stop);
  await page.evaluate(() => { document.getElementById("status").textContent = ""; });
  await page.click("#generate");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("finish: stop"));
  check("a stop string: the tokens spell the text before it", (await outputText()) === first.slice(0, first.indexOf(stop)),
    `${await outputText()} / ${first}`);
  await page.fill("#stop", "");

  // Attention: click a token, lines are drawn to it and the tokens before it.
  await page.click("button[data-view=attention]");
  await page.fill("#att-text", "pan zagłoba zawołał");
  await page.click("#att-run");
  await page.waitForSelector("#att-lines");
  await page.locator("#att-lines text.tok-query").nth(5).click();
  const lines = await page.locator("#att-lines line.att-line").count();
  const selected = await page.locator("#att-lines text.selected").textContent();
  check("clicking a token draws its lines (6: itself and the 5 before it)", lines === 6 && selected === "a", `${lines} lines, selected ${selected}`);
  const total = await page.locator("#att-lines line.att-line").evaluateAll((ls) => ls.reduce((s, l) => s + Number(l.dataset.weight), 0));
  check("the lines' weights sum to 1", Math.abs(total - 1) < 0.01, total);
  await page.selectOption("#att-head", "0");
  await page.locator("#att-lines text.tok-query").nth(12).click();
  check("per head: lines follow the selection", (await page.locator("#att-lines line.att-line").count()) === 13);
  await page.screenshot({ path: `${shots}/studio-attention.png` });

  // Words: a word's characters as one row and one column; every head in its colour; several queries.
  await page.check("#att-words");
  const words = await page.locator("#att-lines text.tok-query").allTextContents();
  const selectedWord = await page.locator("#att-lines text.selected").textContent();
  const wordLines = await page.locator("#att-lines line.att-line").count();
  const wordTotal = await page.locator("#att-lines line.att-line").evaluateAll((ls) => ls.reduce((s, l) => s + Number(l.dataset.weight), 0));
  check("words: one row per word, the last selected, lines to it and the words before, summing to 1",
    JSON.stringify(words) === '["pan","zagłoba","zawołał"]' && selectedWord === "zawołał" && wordLines === 3 &&
    Math.abs(wordTotal - 1) < 0.01, `${words} ${selectedWord} ${wordLines} ${wordTotal}`);
  await page.selectOption("#att-head", "-2");
  const hues = await page.locator("#att-lines line.att-line").evaluateAll((ls) => new Set(ls.map((l) => l.getAttribute("stroke").split(",")[0])).size);
  check("all heads: each head's lines in its colour", (await page.locator("#att-lines line.att-line").count()) === 6 && hues === 2,
    `${hues} hues`);
  await page.selectOption("#att-head", "-1");
  await page.locator("#att-lines text.tok-query").nth(1).click({ modifiers: ["Shift"] });
  check("shift-click adds a query: its lines too (2 more)", (await page.locator("#att-lines line.att-line").count()) === 5 &&
    (await page.locator("#att-lines text.selected").count()) === 2);
  await page.screenshot({ path: `${shots}/studio-attention-words.png` });
  await page.uncheck("#att-words");
  await page.selectOption("#att-head", "0");
  await page.selectOption("#att-mode", "heatmap");
  const cells = await page.locator("#att-heatmap rect.cell").count();
  check("heat map: T(T+1)/2 cells", cells === (19 * 20) / 2, cells);
  await page.screenshot({ path: `${shots}/studio-heatmap.png` });

  // Surprisal of a pasted text.
  await page.click("button[data-view=surprisal]");
  await page.fill("#sur-text", "pan zagłoba zawołał żywo");
  await page.click("#sur-run");
  await page.waitForFunction(() => document.getElementById("sur-status").textContent.includes("bits"));
  const scored = await page.locator("#sur-output .tok").count();
  check("surprisal: one span per character", scored === 24, scored);
  // A text longer than the context (32) is scored through a sliding window, every character.
  await page.fill("#sur-text", "pan zagłoba zawołał żywo ".repeat(4));
  await page.evaluate(() => { document.getElementById("sur-status").textContent = ""; });
  await page.click("#sur-run");
  await page.waitForFunction(() => document.getElementById("sur-status").textContent.includes("bits"));
  check("surprisal of a text longer than the context: every character", (await page.locator("#sur-output .tok").count()) === 100);
  await page.screenshot({ path: `${shots}/studio-surprisal.png` });
  check("no script errors", errors.length === 0, errors.join("; "));

  // A server with --api-key: the studio asks for the key once, then works.
  if (keyUrl) {
    const keyed = await browser.newPage();
    let asked = 0;
    keyed.on("dialog", (d) => { asked++; d.accept(key); });
    await keyed.goto(keyUrl + "/");
    await keyed.waitForFunction(() => document.getElementById("model-name").textContent.includes("layers"));
    await keyed.fill("#prompt", "pan ");
    await keyed.fill("#max_tokens", "5");
    await keyed.click("#generate");
    await keyed.waitForFunction(() => /tokens in|error/.test(document.getElementById("status").textContent));
    const said = await keyed.textContent("#status");
    check("--api-key: the studio asks for the key once and generates", asked === 1 && said.includes("tokens in"),
      `asked ${asked} times: ${said}`);
  }
});
