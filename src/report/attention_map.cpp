#include "report/attention_map.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "report/svg.h"

namespace potop {

std::string token_label(const Tokenizer& tokenizer, int id) {
  const std::string s = tokenizer.decode_one(id);
  if (s == "\n") return "↵";
  if (s == " ") return "␣";
  if (s == "\t") return "⇥";
  return s;
}

namespace {

std::string heat_map_svg(const float* att, const std::vector<std::string>& labels, int T, bool causal) {
  const int cell = std::clamp(560 / T, 4, 22), margin = cell >= 10 ? 18 : 2;
  const int size = margin + cell * T;
  char buf[256];
  std::string svg;
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"%d\" "
                "font-family=\"monospace\">\n",
                size, size, std::max(8, cell - 6));
  svg += buf;
  for (int i = 0; i < T && margin > 2; ++i) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", margin + cell * i + cell / 2,
                  margin - 5);
    svg += buf + xml_escape(labels[i]) + "</text>";
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", margin / 2,
                  margin + cell * i + cell - 5);
    svg += buf + xml_escape(labels[i]) + "</text>\n";
  }
  for (int i = 0; i < T; ++i) {
    for (int j = 0; j < (causal ? i + 1 : T); ++j) {  // causal: keys after the query get no weight
      const float w = att[size_t(i) * T + j];
      std::snprintf(buf, sizeof buf, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">",
                    margin + cell * j, margin + cell * i, cell, cell, heat_colour(w).c_str());
      svg += buf;
      std::snprintf(buf, sizeof buf, " (%d) → ", i);
      std::string title = xml_escape(labels[i]) + buf + xml_escape(labels[j]);
      std::snprintf(buf, sizeof buf, " (%d): %.3f", j, w);
      svg += "<title>" + title + buf + "</title></rect>";
    }
    svg += "\n";
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string attention_html(const SelfAttentionMaps& maps, const std::vector<int>& ids, int layer, int head) {
  const int T = static_cast<int>(ids.size());
  if (T < 1 || T > maps.block_size)
    throw Error("--prompt must hold 1 to " + std::to_string(maps.block_size) + " tokens (the block size), got " +
                std::to_string(T));
  if (layer < -1 || layer >= maps.n_layer)
    throw Error("--layer must be between 0 and " + std::to_string(maps.n_layer - 1) + " (got " + std::to_string(layer) + ")");
  if (head < -1 || head >= maps.n_head)
    throw Error("--head must be between 0 and " + std::to_string(maps.n_head - 1) + " (got " + std::to_string(head) + ")");
  maps.run(ids);
  std::vector<std::string> labels;
  for (int id : ids) labels.push_back(maps.label(id));

  std::string text;
  for (const std::string& l : labels) text += l;
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>potop attention</title><style>"
      "body{font-family:sans-serif;margin:20px} .maps{display:flex;flex-wrap:wrap;gap:18px}"
      " figure{margin:0} figcaption{font-weight:bold;margin-bottom:4px} rect:hover{stroke:#e6550d}"
      "</style></head><body>\n<h1>Attention maps</h1>\n<p>Text: <code>" + xml_escape(text) +
      "</code></p>\n<p>Each map is one head of one layer. Row <i>i</i> is the token that attends (the query), "
      "column <i>j</i> the token it attends to (the key); darker cells carry more of the softmax weight, and "
      "each row sums to 1. " + (maps.causal ? "The causal mask leaves everything right of the diagonal empty. "
                                             : "The encoder is bidirectional: every token attends to the whole row, "
                                               "and its first row is what [CLS] reads. ") +
      "Hover a cell for its weight.</p>\n";
  if (maps.grouped()) {
    const int group = maps.n_head / maps.n_kv_head;
    html += "<p>Grouped-query attention: " + std::to_string(maps.n_head) + " query heads share " +
            std::to_string(maps.n_kv_head) + " key/value head" + (maps.n_kv_head == 1 ? "" : "s") + ", " +
            std::to_string(group) + " query heads each (heads " + std::to_string(0) + "–" + std::to_string(group - 1) +
            " read K/V head 0, and so on): heads of one group score the same keys with their own queries.</p>\n";
  }
  for (int l = 0; l < maps.n_layer; ++l) {
    if (layer >= 0 && l != layer) continue;
    html += "<h2>Layer " + std::to_string(l) + "</h2>\n<div class=\"maps\">\n";
    const float* att = maps.layer(l);
    for (int h = 0; h < maps.n_head; ++h) {
      if (head >= 0 && h != head) continue;
      html += "<figure><figcaption>layer " + std::to_string(l) + ", head " + std::to_string(h) +
              (maps.grouped() ? " (K/V head " + std::to_string(maps.kv_head_of(h)) + ")" : "") + "</figcaption>\n";
      html += heat_map_svg(att + size_t(h) * T * T, labels, T, maps.causal) + "</figure>\n";
    }
    html += "</div>\n";
  }
  return html + "</body></html>\n";
}

SelfAttentionMaps self_attention_maps(SelfAttention& model, const Tokenizer& tokenizer) {
  return SelfAttentionMaps{model.attention_layers(), model.attention_heads(), model.context_length(), model.causal(),
                           [&model](const std::vector<int>& ids) { model.attend(ids); },
                           [&model](int l) { return model.attention(l); },
                           [&model, &tokenizer](int id) { return model.axis_label(tokenizer, id); },
                           model.kv_heads()};
}

std::string bow_attention_html(const Tokenizer& tokenizer, const std::vector<int>& ids, const float* weights,
                               const std::string& kind) {
  const int T = static_cast<int>(ids.size());
  std::vector<std::string> labels;
  std::string text;
  for (int id : ids) labels.push_back(token_label(tokenizer, id)), text += labels.back();
  return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>potop bow attention</title><style>"
         "body{font-family:sans-serif;margin:20px} figure{margin:0} figcaption{font-weight:bold;margin-bottom:4px}"
         " rect:hover{stroke:#e6550d}</style></head><body>\n<h1>Bag-of-words attention</h1>\n<p>Text: <code>" +
         xml_escape(text) +
         "</code></p>\n<p>Row <i>t</i> is the previous word w<sub>i-1</sub>; the model predicts the word after "
         "it from that word and the bag of the words before it, weighted by the row's cells (column <i>k</i>, "
         "k &lt; t; each row sums to 1, the first row has no earlier word). Darker is more weight; hover a cell "
         "for its weight.</p>\n<figure><figcaption>attention: " +
         xml_escape(kind) + "</figcaption>\n" + heat_map_svg(weights, labels, T, true) + "</figure>\n</body></html>\n";
}

// The cross-attention page (Seq2Seq).
namespace {

// A token on a cross-attention axis: its piece, </s> by name.
std::string cross_label(const Tokenizer& tokenizer, int id) {
  if (id == kEosId) return "</s>";
  const std::string s = tokenizer.piece(id);
  return s.empty() ? "?" : s;
}

// att (T, S): row i = target token i, column j = source token j.
std::string cross_map_svg(const float* att, const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  const int T = int(rows.size()), S = int(cols.size());
  const int cell = std::clamp(560 / std::max(T, S), 8, 26), left = 110, top = 110;
  char buf[320];
  std::string svg;
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"12\" "
                "font-family=\"monospace\">\n",
                left + cell * S + 4, top + cell * T + 4);
  svg += buf;
  for (int j = 0; j < S; ++j) {  // source tokens along the top, written upwards
    const int x = left + cell * j + cell / 2 + 4, y = top - 6;
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-60 %d %d)\">", x, y, x, y);
    svg += buf + xml_escape(cols[j]) + "</text>\n";
  }
  for (int i = 0; i < T; ++i) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, top + cell * i + cell - 6);
    svg += buf + xml_escape(rows[i]) + "</text>\n";
    for (int j = 0; j < S; ++j) {
      const float w = att[size_t(i) * S + j];
      std::snprintf(buf, sizeof buf, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">",
                    left + cell * j, top + cell * i, cell, cell, heat_colour(w).c_str());
      svg += buf;
      std::snprintf(buf, sizeof buf, ": %.3f", w);
      svg += "<title>" + xml_escape(rows[i]) + " → " + xml_escape(cols[j]) + buf + "</title></rect>";
    }
    svg += "\n";
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string cross_attention_html(Seq2Seq& model, const Tokenizer& tokenizer, const std::vector<int>& source,
                                 const std::vector<int>& target, int layer) {
  const int block = model.context_length(), n_layer = model.attention_layers();
  const int S = int(source.size()), T = int(target.size()) + 1;
  if (S < 1 || S > block || T > block)
    throw Error("the sentence pair must fit in the model's block size " + std::to_string(block) +
                " tokens a side (source " + std::to_string(S) + ", target " + std::to_string(T) + ")");
  if (layer < -1 || layer >= n_layer)
    throw Error("--layer must be between 0 and " + std::to_string(n_layer - 1) + " (got " + std::to_string(layer) + ")");
  model.attend(source, target);
  // Row i is the position that predicts target token i (its input is token i - 1, or <s>).
  std::vector<std::string> rows, cols;
  for (int id : target) rows.push_back(cross_label(tokenizer, id));
  rows.push_back("</s>");
  for (int id : source) cols.push_back(cross_label(tokenizer, id));
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>potop cross-attention</title><style>"
      "body{font-family:sans-serif;margin:20px} .maps{display:flex;flex-wrap:wrap;gap:18px}"
      " figure{margin:0} figcaption{font-weight:bold;margin-bottom:4px} rect:hover{stroke:#e6550d}"
      "</style></head><body>\n<h1>Cross-attention</h1>\n<p>Source: <code>" + xml_escape(tokenizer.decode(source)) +
      "</code><br>Target: <code>" + xml_escape(tokenizer.decode(target)) +
      "</code></p>\n<p>Row <i>i</i> is the decoder position that predicts target token <i>i</i>; column <i>j</i> a "
      "source token. Darker cells carry more of the softmax weight (each row sums to 1): which source words the "
      "model looks at to produce each target word. The first map of a layer is the mean over its heads.</p>\n";
  const int H = model.attention_heads();
  for (int l = 0; l < n_layer; ++l) {
    if (layer >= 0 && l != layer) continue;
    const float* att = model.cross_attention(l);  // (1, H, T, S)
    std::vector<float> mean(size_t(T) * S, 0.0f);
    for (int h = 0; h < H; ++h)
      for (size_t k = 0; k < mean.size(); ++k) mean[k] += att[size_t(h) * T * S + k] / float(H);
    html += "<h2>Decoder layer " + std::to_string(l) + "</h2>\n<div class=\"maps\">\n";
    html += "<figure><figcaption>layer " + std::to_string(l) + ", mean of heads</figcaption>\n" +
            cross_map_svg(mean.data(), rows, cols) + "</figure>\n";
    for (int h = 0; h < H; ++h)
      html += "<figure><figcaption>layer " + std::to_string(l) + ", head " + std::to_string(h) + "</figcaption>\n" +
              cross_map_svg(att + size_t(h) * T * S, rows, cols) + "</figure>\n";
    html += "</div>\n";
  }
  return html + "</body></html>\n";
}

}  // namespace potop
