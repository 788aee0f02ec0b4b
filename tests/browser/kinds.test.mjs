// The studio of a BERT, a classifier and a translation model in Debian's chromium (playwright-core).
// usage: node kinds.test.mjs BERT_URL CLASSIFIER_URL MT_URL SCREENSHOT_DIR
// Checks that each shows only its kind's views, the masked-word fill draws one bar per fill, its
// attention opens on the [MASK] with lines to every token (an encoder sees both sides), and the
// classifier's labels come with what [CLS] attends to, per layer and head, and a translation's
// cross-attention draws target tokens on the left, source tokens on the right; writes screenshots.
import { check, withChromium } from "./harness.mjs";

const [bertUrl, classifierUrl, mtUrl, shots] = process.argv.slice(2);
const visibleTabs = (page) => page.locator(".tab:not([hidden])").allTextContents();

await withChromium(async (browser, page, errors) => {
  // A BERT: fill mask and attention.
  await page.goto(bertUrl + "/");
  await page.waitForFunction(() => document.getElementById("model-name").textContent.includes("bert"));
  check("bert: only its views, fill mask open", JSON.stringify(await visibleTabs(page)) === '["Fill mask","Attention"]' &&
    (await page.isVisible("#fill-text")), JSON.stringify(await visibleTabs(page)));
  await page.fill("#fill-text", "pan [MASK] zawołał");
  await page.fill("#fill-k", "6");
  await page.click("#fill-run");
  await page.waitForSelector(".fill-bars .bar");
  check("fill mask: one bar per fill", (await page.locator(".fill-bars .bar").count()) === 6);
  await page.screenshot({ path: `${shots}/studio-fill-mask.png` });
  await page.click("#fill-attention");
  await page.waitForSelector("#att-lines");
  const selected = await page.locator("#att-lines text.selected").textContent();
  const tokens = await page.locator("#att-lines text.tok-query").count();
  const lines = await page.locator("#att-lines line.att-line").count();
  check("its attention opens on the [MASK], with a line to every token", selected === "[MASK]" && lines === tokens && tokens > 3,
    `${selected}, ${lines} lines, ${tokens} tokens`);
  const total = await page.locator("#att-lines line.att-line").evaluateAll((ls) => ls.reduce((s, l) => s + Number(l.dataset.weight), 0));
  check("the lines' weights sum to 1", Math.abs(total - 1) < 0.01, total);
  check("says an encoder sees both sides", (await page.textContent("#att-sees")).includes("before and after"));
  await page.screenshot({ path: `${shots}/studio-bert-attention.png` });
  await page.selectOption("#att-mode", "heatmap");
  check("heat map: T × T cells", (await page.locator("#att-heatmap rect.cell").count()) === tokens * tokens);

  // A classifier: its labels and what [CLS] attends to.
  await page.goto(classifierUrl + "/");
  await page.waitForFunction(() => document.getElementById("model-name").textContent.includes("classifier"));
  check("classifier: only its views, classify open", JSON.stringify(await visibleTabs(page)) === '["Classify","Attention"]' &&
    (await page.isVisible("#cls-text")), JSON.stringify(await visibleTabs(page)));
  await page.fill("#cls-text", "kmicic dobry pan");
  await page.click("#cls-run");
  await page.waitForSelector("#cls-focus .focus-tok");
  check("classify: a bar per label", (await page.locator(".cls-bars .bar").count()) === 2);
  check("what [CLS] attends to", (await page.textContent("#cls-focus-title")).includes("[CLS]"));
  const focus = await page.locator("#cls-focus .focus-tok").allTextContents();
  check("every token of [CLS] text [SEP] shaded", focus[0] === "[CLS]" && focus[focus.length - 1] === "[SEP]", JSON.stringify(focus));
  const layers = await page.locator("#cls-layer option").count();
  const before = await page.locator("#cls-focus .focus-tok").evaluateAll((s) => s.map((e) => e.dataset.weight).join());
  await page.selectOption("#cls-layer", "0");
  await page.selectOption("#cls-head", "0");
  const after = await page.locator("#cls-focus .focus-tok").evaluateAll((s) => s.map((e) => e.dataset.weight).join());
  check("per layer and head: choosing another redraws", layers >= 1 && before !== after, `${before} / ${after}`);
  await page.screenshot({ path: `${shots}/studio-classify.png` });

  // A translation model: a translation, then its cross-attention.
  await page.goto(mtUrl + "/");
  await page.waitForFunction(() => document.getElementById("model-name").textContent.includes("encoder-decoder"));
  check("translation: only its views, translate open", JSON.stringify(await visibleTabs(page)) === '["Translate","Attention"]' &&
    (await page.isVisible("#tr-text")), JSON.stringify(await visibleTabs(page)));
  await page.fill("#tr-text", "pan zagłoba zawołał żywo");
  await page.click("#tr-run");
  await page.waitForFunction(() => document.getElementById("tr-status").textContent.includes("tokens in"));
  const translation = await page.textContent("#tr-output");
  check("translate: a translation", translation.length > 0, translation);
  await page.click("#tr-attention");
  await page.waitForSelector("#att-lines");
  const targets = await page.locator("#att-lines text.tok-query").allTextContents();
  const sources = await page.locator("#att-lines text.tok-key").allTextContents();
  const crossLines = await page.locator("#att-lines line.att-line").count();
  check("cross-attention: target tokens and </s> on the left, the source's on the right, a line to each",
    targets[targets.length - 1] === "</s>" && sources[sources.length - 1] === "</s>" && crossLines === sources.length &&
    (await page.textContent("#att-sees")).includes("target token"), `${targets} | ${sources} | ${crossLines}`);
  await page.selectOption("#att-mode", "heatmap");
  check("cross-attention heat map: targets × sources",
    (await page.locator("#att-heatmap rect.cell").count()) === targets.length * sources.length);
  await page.screenshot({ path: `${shots}/studio-cross-attention.png` });
  check("no script errors", errors.length === 0, errors.join("; "));
});
