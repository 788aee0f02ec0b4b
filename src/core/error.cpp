#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace potop {

void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "potop: internal error at %s:%d: check '%s' failed%s%s\n", file, line, condition,
               message.empty() ? "" : ": ", message.c_str());
  std::abort();
}

}  // namespace potop
