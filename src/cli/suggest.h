// "Did you mean": the closest known name to one the user mistyped.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace potop::cli {

// The candidate closest to `typed` when it is close enough to be a typo (an edit distance of at
// most 2, or equal once dashes are ignored: --nlayer for --n-layer); "" otherwise.
std::string closest(const std::string& typed, const std::vector<std::string>& candidates);

// " (did you mean --n-layer?)" for the first unexpected argument of a failed parse, or "".
std::string did_you_mean(const CLI::App& app);

}  // namespace potop::cli
