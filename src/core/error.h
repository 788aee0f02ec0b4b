// Two kinds of failure, kept apart on purpose:
//  - potop::Error: the user's input is wrong (a file, a flag, a field, a request). It carries a
//    one-line message naming the culprit; the CLI prints it and exits non-zero, the server
//    answers 4xx. Library code throws it and never calls exit().
//  - POTOP_CHECK: a contract between our own functions is broken (a bug). It aborts with
//    file:line, because continuing would compute garbage.
#pragma once
#include <stdexcept>
#include <string>

namespace potop {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);

}  // namespace potop

// __FILE_NAME__, the file's name without its directory: a message names no path of the machine
// that built potop, and an object's bytes do not depend on where the checkout lies (so ccache
// hands a fresh clone the objects another checkout compiled).
#define POTOP_CHECK(cond, ...)                                                                 \
  do {                                                                                         \
    if (!(cond)) ::potop::check_failed(__FILE_NAME__, __LINE__, #cond, std::string{__VA_ARGS__}); \
  } while (0)
