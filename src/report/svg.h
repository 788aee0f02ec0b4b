// Just enough SVG to draw line charts and heat maps without a plotting library.
#pragma once
#include <string>
#include <string_view>

namespace potop {

// Escapes &, <, >, " and ' for text and attribute values.
std::string xml_escape(std::string_view text);
// A colour from white (0) to dark blue (1) for heat maps; v is clamped to [0, 1].
std::string heat_colour(double v);

}  // namespace potop
