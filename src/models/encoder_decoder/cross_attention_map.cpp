#include "models/encoder_decoder/cross_attention_map.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "report/svg.h"

namespace potop {

namespace {

std::string label(const Tokenizer& tokenizer, int id) {
  if (id == kEosId) return "</s>";
  const std::string s = tokenizer.piece(id);
  return s.empty() ? "?" : s;
}

// att (T, S): row i = target token i, column j = source token j.
std::string map_svg(const float* att, const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
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

std::string cross_attention_html(EncoderDecoder& model, const Tokenizer& tokenizer, const std::vector<int>& source,
                                 const std::vector<int>& target, int layer) {
  const EncoderDecoderConfig& c = model.config();
  const int S = int(source.size()), T = int(target.size()) + 1;
  if (S < 1 || S > c.block_size || T > c.block_size)
    throw Error("the sentence pair must fit in the model's block size " + std::to_string(c.block_size) +
                " tokens a side (source " + std::to_string(S) + ", target " + std::to_string(T) + ")");
  if (layer < -1 || layer >= c.n_layer)
    throw Error("--layer must be between 0 and " + std::to_string(c.n_layer - 1) + " (got " + std::to_string(layer) + ")");
  std::vector<int> input{kBosId};
  input.insert(input.end(), target.begin(), target.end());
  Batch batch;
  batch.B = 1, batch.T = T, batch.S = S;
  batch.tokens = input.data(), batch.source = source.data();
  model.forward(batch, Pass{});
  // Row i is the position that predicts target token i (its input is token i - 1, or <s>).
  std::vector<std::string> rows, cols;
  for (int id : target) rows.push_back(label(tokenizer, id));
  rows.push_back("</s>");
  for (int id : source) cols.push_back(label(tokenizer, id));
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>potop cross-attention</title><style>"
      "body{font-family:sans-serif;margin:20px} .maps{display:flex;flex-wrap:wrap;gap:18px}"
      " figure{margin:0} figcaption{font-weight:bold;margin-bottom:4px} rect:hover{stroke:#e6550d}"
      "</style></head><body>\n<h1>Cross-attention</h1>\n<p>Source: <code>" + xml_escape(tokenizer.decode(source)) +
      "</code><br>Target: <code>" + xml_escape(tokenizer.decode(target)) +
      "</code></p>\n<p>Row <i>i</i> is the decoder position that predicts target token <i>i</i>; column <i>j</i> a "
      "source token. Darker cells carry more of the softmax weight (each row sums to 1): which source words the "
      "model looks at to produce each target word. The first map of a layer is the mean over its heads.</p>\n";
  const int H = c.n_head;
  for (int l = 0; l < c.n_layer; ++l) {
    if (layer >= 0 && l != layer) continue;
    const float* att = model.cross_attention(l);  // (1, H, T, S)
    std::vector<float> mean(size_t(T) * S, 0.0f);
    for (int h = 0; h < H; ++h)
      for (size_t k = 0; k < mean.size(); ++k) mean[k] += att[size_t(h) * T * S + k] / float(H);
    html += "<h2>Decoder layer " + std::to_string(l) + "</h2>\n<div class=\"maps\">\n";
    html += "<figure><figcaption>layer " + std::to_string(l) + ", mean of heads</figcaption>\n" +
            map_svg(mean.data(), rows, cols) + "</figure>\n";
    for (int h = 0; h < H; ++h)
      html += "<figure><figcaption>layer " + std::to_string(l) + ", head " + std::to_string(h) + "</figcaption>\n" +
              map_svg(att + size_t(h) * T * S, rows, cols) + "</figure>\n";
    html += "</div>\n";
  }
  return html + "</body></html>\n";
}

}  // namespace potop
