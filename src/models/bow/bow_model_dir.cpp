#include "models/bow/bow_model_dir.h"

namespace potop {

LoadedBow load_bow_dir(const fs::path& dir, const std::string& which) {
  return load_model_dir_as<BowLM, BowConfig>(dir, which, kBowKind);
}

}  // namespace potop
