#include "cli/suggest.h"

#include <algorithm>
#include <numeric>

namespace potop::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string without_dashes(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '-'), s.end());
  return s;
}

}  // namespace

std::string closest(const std::string& typed, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;  // a typo is at most two edits away
  for (const std::string& c : candidates) {
    const size_t d = without_dashes(c) == without_dashes(typed) ? 0 : edit_distance(typed, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::string did_you_mean(const CLI::App& app) {
  // The deepest subcommand the parse reached is where the argument was not expected.
  const CLI::App* where = &app;
  for (const CLI::App* sub : app.get_subcommands()) where = sub;
  const std::vector<std::string> extras = where->remaining();
  if (extras.empty()) return "";
  const std::string typed = extras.front();
  std::vector<std::string> names;
  if (typed.starts_with("-")) {
    for (const CLI::Option* opt : where->get_options())
      for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  } else {  // a misspelt subcommand, of potop or of the command it reached ("potop word2vec trian")
    for (const CLI::App* sub : where->get_subcommands({})) names.push_back(sub->get_name());
  }
  const std::string match = closest(typed.substr(0, typed.find('=')), names);
  return match.empty() ? "" : " (did you mean " + match + "?)";
}

}  // namespace potop::cli
