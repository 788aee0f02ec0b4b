#include "core/decimal.h"

#include <charconv>
#include <system_error>

#include "core/error.h"

namespace potop {

double as_written(float x) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  POTOP_CHECK(ec == std::errc{});
  double d = x;
  std::from_chars(buf, end, d);
  return d;
}

}  // namespace potop
