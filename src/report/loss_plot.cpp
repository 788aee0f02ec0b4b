#include "report/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.h"
#include "report/svg.h"

namespace potop {

namespace {

struct Series {
  std::string name, colour;
  double width;
  std::vector<std::pair<double, double>> points;  // (step, loss)
};

std::string fmt(const char* format, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::string loss_curve_svg(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot open (is this a model directory from potop train?)");
  Series train{"train loss (per step)", "#9ecae1", 1.0, {}}, eval_train{"train loss (eval)", "#08519c", 2.0, {}},
      eval_val{"validation loss (eval)", "#e6550d", 2.0, {}};
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(path.string() + ": line " + std::to_string(line_no) + " is not a JSON object");
    const double step = j.value("step", 0.0);
    auto add = [&](Series& s, const char* key) {
      if (j.contains(key) && j[key].is_number() && std::isfinite(j[key].get<double>()))
        s.points.emplace_back(step, j[key].get<double>());
    };
    if (j.value("kind", "") == "train") add(train, "loss");
    if (j.value("kind", "") == "eval") add(eval_train, "train_loss"), add(eval_val, "val_loss");
  }
  std::vector<const Series*> series;
  for (const Series* s : {&train, &eval_train, &eval_val})
    if (!s->points.empty()) series.push_back(s);
  if (series.empty()) throw Error(path.string() + ": no loss records to plot");

  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Series* s : series)
    for (auto [x, y] : s->points) x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  y0 = std::max(0.0, y0 - 0.05 * (y1 - y0));
  const double W = 720, H = 420, left = 60, right = 20, top = 20, bottom = 50;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (W - left - right); };
  auto py = [&](double y) { return top + (y1 - y) / (y1 - y0) * (H - top - bottom); };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + fmt("%.0f", W) + "\" height=\"" +
                    fmt("%.0f", H) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (int i = 0; i <= 5; ++i) {  // grid and tick labels
    const double y = y0 + (y1 - y0) * i / 5, x = x0 + (x1 - x0) * i / 5;
    svg += "<line x1=\"" + fmt("%.1f", left) + "\" x2=\"" + fmt("%.1f", W - right) + "\" y1=\"" + fmt("%.1f", py(y)) +
           "\" y2=\"" + fmt("%.1f", py(y)) + "\" stroke=\"#eee\"/>\n";
    svg += "<text x=\"" + fmt("%.1f", left - 6) + "\" y=\"" + fmt("%.1f", py(y) + 4) + "\" text-anchor=\"end\">" +
           fmt("%.2f", y) + "</text>\n";
    svg += "<text x=\"" + fmt("%.1f", px(x)) + "\" y=\"" + fmt("%.1f", H - bottom + 16) + "\" text-anchor=\"middle\">" +
           fmt("%.0f", x) + "</text>\n";
  }
  svg += "<text x=\"" + fmt("%.1f", (left + W - right) / 2) + "\" y=\"" + fmt("%.1f", H - 10) +
         "\" text-anchor=\"middle\">step</text>\n";
  svg += "<text transform=\"translate(14," + fmt("%.1f", (top + H - bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">loss (nats/char)</text>\n";
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = *series[k];
    std::string pts;
    for (auto [x, y] : s.points) pts += fmt("%.1f", px(x)) + "," + fmt("%.1f", py(y)) + " ";
    svg += "<polyline class=\"" + xml_escape(s.name) + "\" fill=\"none\" stroke=\"" + s.colour + "\" stroke-width=\"" +
           fmt("%.1f", s.width) + "\" points=\"" + pts + "\"/>\n";
    const double ly = top + 14 + 16 * k;
    svg += "<line x1=\"" + fmt("%.1f", W - right - 190) + "\" x2=\"" + fmt("%.1f", W - right - 170) + "\" y1=\"" +
           fmt("%.1f", ly - 4) + "\" y2=\"" + fmt("%.1f", ly - 4) + "\" stroke=\"" + s.colour + "\" stroke-width=\"2\"/>\n";
    svg += "<text x=\"" + fmt("%.1f", W - right - 164) + "\" y=\"" + fmt("%.1f", ly) + "\">" + xml_escape(s.name) +
           "</text>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace potop
