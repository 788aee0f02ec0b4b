#include "support/testing.h"

namespace potop::testing {

std::filesystem::path source_dir() { return POTOP_SOURCE_DIR; }

}  // namespace potop::testing
