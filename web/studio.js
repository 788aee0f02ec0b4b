// potop studio: for a GPT a playground, an attention explorer and a surprisal view; for a BERT the
// masked-word fill and the attention explorer; for a classifier its labels and what [CLS] attends
// to; for a translation model its translations and cross-attention. It talks to the server's own
// API (/v1/completions, /v1/attention, /v1/fill-mask, /v1/classify) and shows the views
// /v1/models lists. No libraries, no network beyond the server.
"use strict";

const $ = (id) => document.getElementById(id);
const tooltip = $("tooltip");

// ---------- the API ----------
// A server started with --api-key wants "Authorization: Bearer KEY": asked for once on a 401,
// kept in this browser's localStorage.
async function api(path, options = {}) {
  for (let attempt = 0; ; ++attempt) {
    const key = localStorage.getItem("potop-api-key");
    const headers = { ...(options.headers || {}), ...(key ? { Authorization: `Bearer ${key}` } : {}) };
    const response = await fetch(path, { ...options, headers });
    if (response.status !== 401 || attempt > 0) return response;
    const given = window.prompt("This server needs an API key (potop serve --api-key):");
    if (!given) return response;
    localStorage.setItem("potop-api-key", given);
  }
}

// ---------- tabs ----------
function showView(name) {
  document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.dataset.view === name));
  document.querySelectorAll(".view").forEach((v) => v.classList.toggle("active", v.id === name));
}
for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showView(tab.dataset.view));

// The views this model's kind has (a GPT's when the server does not say), the first one open.
function showTabs(views) {
  for (const tab of document.querySelectorAll(".tab")) tab.hidden = !views.includes(tab.dataset.view);
  showView(views[0]);
}

let modelMeta = {};
api("v1/models").then((r) => r.json()).then((j) => {
  const m = j.data[0];
  modelMeta = m.meta;
  const kind = m.meta.kind && m.meta.kind !== "gpt" ? `${m.meta.kind}, ` : "";
  const kv = m.meta.n_kv_head && m.meta.n_kv_head < m.meta.n_head ? ` (${m.meta.n_kv_head} K/V)` : "";
  $("model-name").textContent = `${m.id}: ${kind}${m.meta.n_layer} layers × ${m.meta.n_head} heads${kv}, ` +
    `${m.meta.n_embd} wide, context ${m.meta.block_size}, ${m.meta.tokenizer} tokens`;
  showTabs(m.meta.views || ["playground", "attention", "surprisal"]);
  $("att-translation").hidden = m.meta.kind !== "encoder-decoder";
  if (m.meta.kind === "encoder-decoder") $("att-text").value = $("tr-text").value;
}).catch(() => showTabs(["playground", "attention", "surprisal"]));

// ---------- shared helpers ----------
function showTooltip(event, text) {
  tooltip.textContent = text;
  tooltip.hidden = false;
  tooltip.style.left = `${event.clientX + 12}px`;
  tooltip.style.top = `${event.clientY + 14}px`;
}
function hideTooltip() { tooltip.hidden = true; }

// How a token is shown where whitespace would be invisible.
function visible(t) { return t.replace(/\n/g, "↵").replace(/ /g, "␣").replace(/\t/g, "⇥"); }

function alternatives(top, chosen) {
  const rows = Object.entries(top || {}).sort((a, b) => b[1] - a[1]);
  return rows.map(([t, lp]) => `${t === chosen ? "▶" : " "} ${visible(t).padEnd(8)} ${(100 * Math.exp(lp)).toFixed(1)}%`).join("\n");
}

// A span for one scored token: coloured by colour(logprob), hover for the alternatives.
function tokenSpan(text, logprob, top, colour, describe) {
  const span = document.createElement("span");
  span.className = "tok";
  span.textContent = text;
  if (logprob !== null && logprob !== undefined) {
    span.style.background = colour(logprob);
    span.dataset.logprob = logprob;
    span.addEventListener("mousemove", (e) => showTooltip(e, describe(text, logprob) + "\n" + alternatives(top, text)));
    span.addEventListener("mouseleave", hideTooltip);
  }
  return span;
}

async function errorMessage(response) {
  try { return (await response.json()).error.message; } catch { return `HTTP ${response.status}`; }
}

// ---------- playground ----------
let controller = null;
const probColour = (lp) => `hsl(${Math.round(120 * Math.exp(lp))}, 85%, 75%)`;

function numberField(id) {
  const v = $(id).value.trim();
  return v === "" ? undefined : Number(v);
}

async function generate() {
  const output = $("output"), status = $("status");
  output.textContent = "";
  const prompt = document.createElement("span");
  prompt.className = "prompt";
  prompt.textContent = $("prompt").value;
  output.appendChild(prompt);
  const stop = $("stop").value.replace(/\\n/g, "\n");
  const body = {
    prompt: $("prompt").value, max_tokens: numberField("max_tokens"), temperature: numberField("temperature"),
    top_k: numberField("top_k"), top_p: numberField("top_p"), min_p: numberField("min_p"), seed: numberField("seed"),
    stop: stop ? [stop] : undefined, logprobs: 5, stream: true,
  };
  controller = new AbortController();
  $("generate").disabled = true;
  $("cancel").disabled = false;
  status.textContent = "generating…";
  const started = performance.now();
  let tokens = 0, seed = null;
  try {
    const response = await api("v1/completions", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorMessage(response));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "", finish = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!event.startsWith("data: ")) continue;
        const data = event.slice(6);
        if (data === "[DONE]") continue;
        const message = JSON.parse(data);
        const chunk = message.choices[0];
        seed = message.seed;
        // One span per token, coloured by its probability. The server sends a token's score with
        // its text (held back while it may begin a stop string), so the spans spell the completion.
        const lp = chunk.logprobs;
        for (let i = 0; lp && i < lp.tokens.length; ++i) {
          tokens++;
          output.appendChild(tokenSpan(lp.tokens[i], lp.token_logprobs[i], lp.top_logprobs[i], probColour,
            (t, l) => `${visible(t)}  p = ${(100 * Math.exp(l)).toFixed(1)}%`));
        }
        if (chunk.finish_reason) finish = chunk.finish_reason;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    status.textContent = `${tokens} tokens in ${seconds.toFixed(2)} s (${(tokens / seconds).toFixed(0)} tokens/s), ` +
      `finish: ${finish}, seed ${seed}`;
  } catch (e) {
    status.textContent = e.name === "AbortError" ? "stopped" : `error: ${e.message}`;
  } finally {
    $("generate").disabled = false;
    $("cancel").disabled = true;
    controller = null;
  }
}

$("generate").addEventListener("click", generate);
$("cancel").addEventListener("click", () => controller && controller.abort());

// ---------- attention explorer ----------
// att: the server's answer; selection: the query rows (tokens, or words) whose lines are drawn,
// the last clicked last.
let att = null, selection = [];
const attColour = (w) => `rgba(30, 90, 200, ${Math.min(1, 0.05 + 0.95 * w)})`;
const headColour = (h, n, w) => `hsla(${Math.round((360 * h) / n)}, 75%, 42%, ${Math.min(1, 0.08 + 0.92 * w)})`;
const ALL_HEADS = -2;

// The attention of a text: {tokens, n_layer, n_head, n_kv_head, causal, focus, attention}, or an error; a
// translation model's cross-attention also has the target's tokens as "queries" (rows), the
// source's as "tokens" (keys), for a given translation or the model's own.
async function fetchAttention(text, translation) {
  const response = await api("v1/attention", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(translation ? { text, translation } : { text }),
  });
  if (!response.ok) throw new Error(await errorMessage(response));
  return response.json();
}

// Fills a layer select (the last layer chosen) and a head select ("average" first, then with
// allHeads "all, a colour each") for a map.
function layerAndHeadOptions(layer, head, map, allHeads = false) {
  layer.innerHTML = "";
  for (let l = 0; l < map.n_layer; ++l) layer.add(new Option(`${l}`, l));
  head.innerHTML = "";
  head.add(new Option("average", -1));
  if (allHeads) head.add(new Option("all, a colour each", ALL_HEADS));
  // Grouped-query attention: each query head's option names the key/value head it shares.
  const group = map.n_kv_head && map.n_kv_head < map.n_head ? map.n_head / map.n_kv_head : 0;
  for (let h = 0; h < map.n_head; ++h)
    head.add(new Option(group ? `${h} (K/V ${Math.floor(h / group)})` : `${h}`, h));
}

async function loadAttention() {
  const view = $("att-view");
  try {
    att = await fetchAttention($("att-text").value, $("att-translation").hidden ? "" : $("att-translation").value);
  } catch (e) {
    view.textContent = "error: " + e.message; att = null; return;
  }
  layerAndHeadOptions($("att-layer"), $("att-head"), att, true);
  selectFocus();
  $("att-layer").value = 0;
  $("att-sees").textContent = att.cross ? "(a target token on the left, the source tokens it looks at on the right)"
    : att.causal === false ? "(it sees every token, before and after it)" : "(it sees only those before it)";
  drawAttention();
}

// weights(map, l, h)[i][j]: the weight query i gives key j (a causal model's rows stop at the
// diagonal, an encoder's hold every key); h = -1 averages heads.
function weightsOf(map, l, h) {
  if (h >= 0) return map.attention[l][h];
  const heads = map.attention[l];
  return heads[0].map((row, i) => row.map((_, j) => heads.reduce((s, hd) => s + hd[i][j], 0) / heads.length));
}

// ---- words: a word's tokens as one row and one column (BertViz's and exBERT's grouping)
const SPACE = /^[\s␣↵⇥▁]/;
const SPECIAL = new Set(["[CLS]", "[SEP]", "[MASK]", "</s>"]);
// groups(tokens): {first, end, label} per word: a token that begins with whitespace (unless it
// follows whitespace alone: a space token begins the word after it), a special token, or the
// token after one, begins a word.
function groups(tokens) {
  const out = [];
  const blank = (t) => /^[\s␣↵⇥▁]+$/.test(t);
  tokens.forEach((t, i) => {
    const starts = i === 0 || (SPACE.test(t) && !blank(tokens[i - 1])) || SPECIAL.has(t) || SPECIAL.has(tokens[i - 1]);
    if (starts) out.push({ first: i, end: i + 1 });
    else out[out.length - 1].end = i + 1;
  });
  for (const g of out) g.label = tokens.slice(g.first, g.end).join("").replace(/^[\s␣↵⇥▁]+/, "") || tokens[g.first];
  return out;
}
// W by words: row a is the mean over its tokens' rows of the weights summed over each key word
// (rows still sum to 1); a causal row stops at the word its last token's row reaches.
function byWords(W, qGroups, kGroups, keyGroup) {
  return qGroups.map((q) => {
    const last = Math.max(...W.slice(q.first, q.end).map((row) => row.length)) - 1;
    const row = new Array(keyGroup[last] + 1).fill(0);
    for (let i = q.first; i < q.end; ++i)
      W[i].forEach((w, j) => { row[keyGroup[j]] += w / (q.end - q.first); });
    return row;
  });
}

// What is drawn: query and key labels and the weights of a head (-1 average) in tokens or words.
function shown() {
  const keys = att.tokens, queries = att.queries || att.tokens;
  const raw = (h) => weightsOf(att, Number($("att-layer").value), h);
  if (!$("att-words").checked) return { queries, keys, weights: raw };
  const qGroups = groups(queries), kGroups = groups(keys);
  const keyGroup = [];
  kGroups.forEach((g, a) => { for (let j = g.first; j < g.end; ++j) keyGroup[j] = a; });
  return { queries: qGroups.map((g) => g.label), keys: kGroups.map((g) => g.label), qGroups,
           weights: (h) => byWords(raw(h), qGroups, kGroups, keyGroup) };
}

// The query the model's output is read from, selected: a GPT's last token, [CLS], a [MASK] (or
// the word holding it).
function selectFocus() {
  let focus = att.focus ?? att.tokens.length - 1;
  if ($("att-words").checked) focus = shown().qGroups.findIndex((g) => g.first <= focus && focus < g.end);
  selection = [focus];
}

const SVG = "http://www.w3.org/2000/svg";
function svgElement(name, attrs) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function drawAttention() {
  if (!att) return;
  const view = $("att-view");
  view.innerHTML = "";
  const { queries, keys, weights } = shown();
  const head = Number($("att-head").value);
  if ($("att-mode").value === "heatmap") return drawHeatmap(view, weights(head === ALL_HEADS ? -1 : head), queries, keys);
  const rowH = 22, left = 150, right = 450, height = Math.max(queries.length, keys.length) * rowH + 20;
  const svg = svgElement("svg", { width: 620, height, id: "att-lines" });
  // One set of lines per selected query: in the heads' average or one head, or every head in its colour.
  const heads = head === ALL_HEADS ? [...Array(att.n_head).keys()] : [head];
  const maps = heads.map((h) => weights(h));
  for (const q of selection) {
    heads.forEach((h, k) => {
      const row = maps[k][q];
      const dy = (k - (heads.length - 1) / 2) * 3;  // the heads' lines side by side, not on top of each other
      for (let j = 0; j < row.length; ++j) {
        const colour = head === ALL_HEADS ? headColour(h, att.n_head, row[j]) : attColour(row[j]);
        svg.appendChild(svgElement("line", {
          x1: left + 6, y1: 14 + q * rowH + dy, x2: right - 6, y2: 14 + j * rowH + dy, stroke: colour,
          "stroke-width": 1 + (head === ALL_HEADS ? 4 : 7) * row[j], class: "att-line", "data-weight": row[j].toFixed(4),
          "data-query": q, "data-head": h,
        }));
      }
    });
  }
  const primary = selection[selection.length - 1], row = maps[0][primary];
  for (const [tokens, x, anchor, side] of [[queries, left, "end", "query"], [keys, right, "start", "key"]]) {
    tokens.forEach((t, i) => {
      const label = svgElement("text", { x, y: 19 + i * rowH, "text-anchor": anchor, class: `tok-${side}` });
      label.textContent = visible(t);
      if (side === "query") {
        if (selection.includes(i)) label.classList.add("selected");
        // A click selects this token alone; shift (or ctrl) adds it to the selection, or takes it out.
        label.addEventListener("click", (e) => {
          if (e.shiftKey || e.ctrlKey || e.metaKey) {
            selection = selection.includes(i) ? selection.filter((s) => s !== i) : [...selection, i];
            if (!selection.length) selection = [i];
          } else {
            selection = [i];
          }
          drawAttention();
        });
      } else if (i < row.length) {
        label.addEventListener("mousemove", (e) => showTooltip(e, `${visible(queries[primary])} → ${visible(t)}: ${row[i].toFixed(3)}`));
        label.addEventListener("mouseleave", hideTooltip);
      }
      svg.appendChild(label);
    });
  }
  view.appendChild(svg);
}

// Rows: the queries (attending tokens), columns: the keys they attend to.
function drawHeatmap(view, W, queries, keys) {
  const cell = Math.max(8, Math.min(26, Math.floor(560 / Math.max(queries.length, keys.length)))), margin = 60;
  const svg = svgElement("svg", { width: margin + cell * keys.length + 10, height: margin + cell * queries.length + 10,
                                  id: "att-heatmap" });
  keys.forEach((t, j) => {
    const k = svgElement("text", { x: margin + cell * j + cell / 2, y: margin - 6, "text-anchor": "middle" });
    k.textContent = visible(t);
    svg.appendChild(k);
  });
  for (let i = 0; i < queries.length; ++i) {
    const q = svgElement("text", { x: margin - 4, y: margin + cell * i + cell * 0.75, "text-anchor": "end" });
    q.textContent = visible(queries[i]);
    q.addEventListener("click", () => { selection = [i]; $("att-mode").value = "lines"; drawAttention(); });
    svg.appendChild(q);
    for (let j = 0; j < W[i].length; ++j) {
      const rect = svgElement("rect", { x: margin + cell * j, y: margin + cell * i, width: cell, height: cell,
                                        fill: attColour(W[i][j]), class: "cell" });
      rect.addEventListener("mousemove", (e) => showTooltip(e, `${visible(queries[i])} → ${visible(keys[j])}: ${W[i][j].toFixed(3)}`));
      rect.addEventListener("mouseleave", hideTooltip);
      svg.appendChild(rect);
    }
  }
  view.appendChild(svg);
}

$("att-run").addEventListener("click", loadAttention);
for (const id of ["att-layer", "att-head", "att-mode"]) $(id).addEventListener("change", drawAttention);
$("att-words").addEventListener("change", () => { if (att) { selectFocus(); drawAttention(); } });

// ---------- surprisal ----------
const bits = (lp) => -lp / Math.LN2;
const surColour = (lp) => `hsla(20, 90%, 60%, ${Math.min(1, bits(lp) / 12)})`;

async function score() {
  const out = $("sur-output"), status = $("sur-status");
  out.textContent = "";
  const response = await api("v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: $("sur-text").value, max_tokens: 0, echo: true, logprobs: 5 }),
  });
  if (!response.ok) { status.textContent = "error: " + (await errorMessage(response)); return; }
  const lp = (await response.json()).choices[0].logprobs;
  let total = 0, counted = 0;
  lp.tokens.forEach((t, i) => {
    const l = lp.token_logprobs[i];
    if (l !== null) { total += bits(l); counted++; }
    out.appendChild(tokenSpan(t, l, lp.top_logprobs[i], surColour,
      (text, v) => `${visible(text)}  ${bits(v).toFixed(2)} bits (p = ${(100 * Math.exp(v)).toFixed(2)}%)`));
  });
  status.textContent = counted ? `${counted} tokens scored, mean surprisal ${(total / counted).toFixed(3)} bits per token` : "";
}
$("sur-run").addEventListener("click", score);

// ---------- fill mask (a BERT) ----------
// One row of a bar chart: a label, a bar as long as p / scale (the chart's largest p, or 1), the
// percentage.
function barRow(container, label, p, best, title, scale = 1) {
  const name = document.createElement("span");
  name.textContent = label;
  if (title) name.title = title;
  const bar = document.createElement("div");
  bar.className = "bar";
  bar.style.width = `${Math.max(0.5, 100 * p / scale)}%`;
  const value = document.createElement("span");
  value.textContent = `${(100 * p).toFixed(1)}%`;
  if (best) name.classList.add("best"), value.classList.add("best");
  container.append(name, bar, value);
}

async function fillMask() {
  const out = $("fill-output"), status = $("fill-status");
  out.textContent = "";
  status.textContent = "";
  const response = await api("v1/fill-mask", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ text: $("fill-text").value, top_k: numberField("fill-k") }),
  });
  if (!response.ok) { status.textContent = "error: " + (await errorMessage(response)); return; }
  const masks = (await response.json()).masks;
  masks.forEach((fills, m) => {
    const title = document.createElement("h3");
    title.textContent = masks.length > 1 ? `[MASK] ${m + 1}` : "[MASK]";
    const bars = document.createElement("div");
    bars.className = "bars fill-bars";
    fills.forEach((f, i) => barRow(bars, visible(f.token_str), f.score, i === 0, f.sequence, fills[0].score));
    out.append(title, bars);
  });
  status.textContent = "bars relative to the likeliest fill; hover a token for the text with it in place";
}
$("fill-run").addEventListener("click", fillMask);
$("fill-attention").addEventListener("click", () => {
  $("att-text").value = $("fill-text").value;
  showView("attention");
  loadAttention();
});

// ---------- classify (a classifier) ----------
let clsAtt = null;

async function classify() {
  const out = $("cls-output"), status = $("cls-status"), text = $("cls-text").value;
  out.textContent = "";
  status.textContent = "";
  const response = await api("v1/classify", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ input: text }),
  });
  if (!response.ok) { status.textContent = "error: " + (await errorMessage(response)); return; }
  const answer = (await response.json()).data[0];
  const bars = document.createElement("div");
  bars.className = "bars cls-bars";
  Object.entries(answer.probabilities).sort((a, b) => b[1] - a[1])
    .forEach(([label, p]) => barRow(bars, label, p, label === answer.label));
  out.appendChild(bars);
  try {
    clsAtt = await fetchAttention(text);
  } catch (e) {
    status.textContent = "attention: " + e.message; clsAtt = null; return;
  }
  layerAndHeadOptions($("cls-layer"), $("cls-head"), clsAtt);
  $("cls-layer").value = clsAtt.n_layer - 1;
  drawFocus();
}

// The text's tokens shaded by the weight the pooled query ([CLS], or the last token) gives each,
// in one layer and head (or the heads' average); mean pooling reads every row: their mean.
function drawFocus() {
  if (!clsAtt) return;
  const W = weightsOf(clsAtt, Number($("cls-layer").value), Number($("cls-head").value));
  const T = clsAtt.tokens.length, mean = modelMeta.pooling === "mean";
  const w = mean ? clsAtt.tokens.map((_, j) => W.reduce((s, row) => s + (row[j] || 0), 0) / T) : W[clsAtt.focus];
  const top = Math.max(...w);
  const who = mean ? "every token (mean pooling)" : visible(clsAtt.tokens[clsAtt.focus]);
  $("cls-focus-title").textContent = `What ${who} attends to`;
  const view = $("cls-focus");
  view.textContent = "";
  clsAtt.tokens.forEach((t, j) => {
    const span = document.createElement("span");
    span.className = "tok focus-tok";
    span.textContent = t;
    span.style.background = attColour(top > 0 ? w[j] / top : 0);
    span.dataset.weight = w[j];
    span.addEventListener("mousemove", (e) => showTooltip(e, `${visible(t)}: ${w[j].toFixed(3)}`));
    span.addEventListener("mouseleave", hideTooltip);
    view.appendChild(span);
  });
  $("cls-focus-title").hidden = view.hidden = false;
}
$("cls-run").addEventListener("click", classify);
for (const id of ["cls-layer", "cls-head"]) $(id).addEventListener("change", drawFocus);

// ---------- translate (a translation model) ----------
async function translate() {
  const out = $("tr-output"), status = $("tr-status");
  out.textContent = "";
  status.textContent = "translating…";
  const started = performance.now();
  const response = await api("v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: $("tr-text").value, beam: numberField("tr-beam") }),
  });
  if (!response.ok) { status.textContent = "error: " + (await errorMessage(response)); return; }
  const answer = await response.json();
  out.textContent = answer.choices[0].text;
  status.textContent = `${answer.usage.completion_tokens} tokens in ${((performance.now() - started) / 1000).toFixed(2)} s, ` +
    `beam ${numberField("tr-beam") || 1}`;
}
$("tr-run").addEventListener("click", translate);
$("tr-attention").addEventListener("click", () => {
  $("att-text").value = $("tr-text").value;
  $("att-translation").value = $("tr-output").textContent;
  showView("attention");
  loadAttention();
});
