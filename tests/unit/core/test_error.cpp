#include "core/error.h"

#include <gtest/gtest.h>

namespace potop {
namespace {

// An internal error names the source file alone: no directory of the machine that built potop.
TEST(CheckFailed, NamesTheFileWithoutTheBuildPath) {
  EXPECT_DEATH(POTOP_CHECK(1 + 1 == 3, "arithmetic"),
               "potop: internal error at test_error\\.cpp:[0-9]+: check '1 \\+ 1 == 3' failed: arithmetic");
}

}  // namespace
}  // namespace potop
