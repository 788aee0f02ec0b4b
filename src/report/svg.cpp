#include "report/svg.h"

#include <algorithm>
#include <cstdio>

namespace potop {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string heat_colour(double v) {
  v = std::clamp(v, 0.0, 1.0);
  // Linear blend from white to #08306b (the dark end of a sequential blue scale).
  const int r = static_cast<int>(255 + (8 - 255) * v), g = static_cast<int>(255 + (48 - 255) * v),
            b = static_cast<int>(255 + (107 - 255) * v);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

}  // namespace potop
