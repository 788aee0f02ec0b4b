// potop studio: a playground, an attention explorer and a surprisal view, talking to the
// server's own API (/v1/completions, /v1/attention). No libraries, no network beyond the server.
"use strict";

const $ = (id) => document.getElementById(id);
const tooltip = $("tooltip");

// ---------- tabs ----------
for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t === tab));
    document.querySelectorAll(".view").forEach((v) => v.classList.toggle("active", v.id === tab.dataset.view));
  });
}

fetch("v1/models").then((r) => r.json()).then((j) => {
  const m = j.data[0];
  $("model-name").textContent = `${m.id}: ${m.meta.n_layer} layers × ${m.meta.n_head} heads, ` +
    `${m.meta.n_embd} wide, context ${m.meta.block_size}, ${m.meta.tokenizer} tokens`;
}).catch(() => {});

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
  let tokens = 0;
  try {
    const response = await fetch("v1/completions", {
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
        const chunk = JSON.parse(data).choices[0];
        const lp = chunk.logprobs;
        if (lp && lp.tokens.length) {
          // One span per token, coloured by its probability; the text shown is what the server
          // released (stop strings held back), so a held-back token shows once it is released.
          for (let i = 0; i < lp.tokens.length; ++i) {
            tokens++;
            output.appendChild(tokenSpan(lp.tokens[i], lp.token_logprobs[i], lp.top_logprobs[i], probColour,
              (t, l) => `${visible(t)}  p = ${(100 * Math.exp(l)).toFixed(1)}%`));
          }
          // What a stop string cut off is removed at the end (trimToReleased).
          pending += lp.tokens.join("");
          released += chunk.text;
        } else if (chunk.text) {
          released += chunk.text;
          pending += chunk.text;
          output.appendChild(document.createTextNode(chunk.text));
        }
        if (chunk.finish_reason) finish = chunk.finish_reason;
      }
    }
    trimToReleased(output);
    const seconds = (performance.now() - started) / 1000;
    status.textContent = `${tokens} tokens in ${seconds.toFixed(2)} s (${(tokens / seconds).toFixed(0)} tokens/s), finish: ${finish}`;
  } catch (e) {
    status.textContent = e.name === "AbortError" ? "stopped" : `error: ${e.message}`;
  } finally {
    $("generate").disabled = false;
    $("cancel").disabled = true;
    controller = null;
    pending = "", released = "";
  }
}

// The text of the tokens received and the text the server released (without a stop string).
let pending = "", released = "";
// At the end, text a stop string cut off is removed, so the output is exactly the completion.
function trimToReleased(output) {
  let extra = pending.length - released.length;
  const spans = [...output.querySelectorAll(".tok")];
  for (let i = spans.length - 1; i >= 0 && extra > 0; --i) {
    const t = spans[i].textContent;
    if (t.length <= extra) { spans[i].remove(); extra -= t.length; }
    else { spans[i].textContent = t.slice(0, t.length - extra); extra = 0; }
  }
}

$("generate").addEventListener("click", generate);
$("cancel").addEventListener("click", () => controller && controller.abort());

// ---------- attention explorer ----------
let att = null, selected = 0;
const attColour = (w) => `rgba(30, 90, 200, ${Math.min(1, 0.05 + 0.95 * w)})`;

async function loadAttention() {
  const view = $("att-view");
  const response = await fetch("v1/attention?text=" + encodeURIComponent($("att-text").value));
  if (!response.ok) { view.textContent = "error: " + (await errorMessage(response)); att = null; return; }
  att = await response.json();
  selected = att.tokens.length - 1;
  const layer = $("att-layer"), head = $("att-head");
  layer.innerHTML = "";
  for (let l = 0; l < att.n_layer; ++l) layer.add(new Option(`${l}`, l));
  head.innerHTML = "";
  head.add(new Option("average", -1));
  for (let h = 0; h < att.n_head; ++h) head.add(new Option(`${h}`, h));
  drawAttention();
}

// weights(l, h)[i][j]: the weight query i gives key j (rows stop at the diagonal); h = -1 averages heads.
function weights(l, h) {
  if (h >= 0) return att.attention[l][h];
  const heads = att.attention[l];
  return heads[0].map((row, i) => row.map((_, j) => heads.reduce((s, hd) => s + hd[i][j], 0) / heads.length));
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
  const W = weights(Number($("att-layer").value), Number($("att-head").value));
  const T = att.tokens.length;
  if ($("att-mode").value === "heatmap") return drawHeatmap(view, W, T);
  const rowH = 22, left = 150, right = 450, height = T * rowH + 20;
  const svg = svgElement("svg", { width: 620, height, id: "att-lines" });
  const row = W[selected];
  for (let j = 0; j <= selected; ++j) {
    svg.appendChild(svgElement("line", {
      x1: left + 6, y1: 14 + selected * rowH, x2: right - 6, y2: 14 + j * rowH,
      stroke: attColour(row[j]), "stroke-width": 1 + 7 * row[j], class: "att-line", "data-weight": row[j].toFixed(4),
    }));
  }
  att.tokens.forEach((t, i) => {
    for (const [x, anchor, side] of [[left, "end", "query"], [right, "start", "key"]]) {
      const label = svgElement("text", { x, y: 19 + i * rowH, "text-anchor": anchor, class: `tok-${side}` });
      label.textContent = visible(t);
      if (i === selected && side === "query") label.classList.add("selected");
      label.addEventListener("click", () => { selected = i; drawAttention(); });
      if (side === "key" && i <= selected) {
        label.addEventListener("mousemove", (e) => showTooltip(e, `${visible(att.tokens[selected])} → ${visible(t)}: ${row[i].toFixed(3)}`));
        label.addEventListener("mouseleave", hideTooltip);
      }
      svg.appendChild(label);
    }
  });
  view.appendChild(svg);
}

function drawHeatmap(view, W, T) {
  const cell = Math.max(8, Math.min(26, Math.floor(560 / T))), margin = 60;
  const size = margin + cell * T;
  const svg = svgElement("svg", { width: size + 10, height: size + 10, id: "att-heatmap" });
  for (let i = 0; i < T; ++i) {
    const q = svgElement("text", { x: margin - 4, y: margin + cell * i + cell * 0.75, "text-anchor": "end" });
    q.textContent = visible(att.tokens[i]);
    q.addEventListener("click", () => { selected = i; $("att-mode").value = "lines"; drawAttention(); });
    svg.appendChild(q);
    const k = svgElement("text", { x: margin + cell * i + cell / 2, y: margin - 6, "text-anchor": "middle" });
    k.textContent = visible(att.tokens[i]);
    svg.appendChild(k);
    for (let j = 0; j <= i; ++j) {
      const rect = svgElement("rect", { x: margin + cell * j, y: margin + cell * i, width: cell, height: cell,
                                        fill: attColour(W[i][j]), class: "cell" });
      rect.addEventListener("mousemove", (e) => showTooltip(e, `${visible(att.tokens[i])} → ${visible(att.tokens[j])}: ${W[i][j].toFixed(3)}`));
      rect.addEventListener("mouseleave", hideTooltip);
      svg.appendChild(rect);
    }
  }
  view.appendChild(svg);
}

$("att-run").addEventListener("click", loadAttention);
for (const id of ["att-layer", "att-head", "att-mode"]) $(id).addEventListener("change", drawAttention);

// ---------- surprisal ----------
const bits = (lp) => -lp / Math.LN2;
const surColour = (lp) => `hsla(20, 90%, 60%, ${Math.min(1, bits(lp) / 12)})`;

async function score() {
  const out = $("sur-output"), status = $("sur-status");
  out.textContent = "";
  const response = await fetch("v1/completions", {
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
