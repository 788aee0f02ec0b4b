#include "data/labelled_text.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/text_file.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace {

// A label for a message: quoted, cut if long.
std::string label_text(const std::string& s) { return "'" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "'"; }

std::string listed(const std::vector<std::string>& labels) {
  std::string out;
  for (size_t i = 0; i < labels.size() && i < 20; ++i) out += (i ? ", " : "") + labels[i];
  if (labels.size() > 20) out += ", ... (" + std::to_string(labels.size()) + " in all)";
  return out;
}

}  // namespace

std::vector<LabelledExample> read_labelled_tsv(const std::string& path) {
  std::string bytes = read_text_file(path);  // refuses a missing, empty or binary file
  size_t begin = bytes.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // the byte-order mark marks the encoding only
  std::vector<LabelledExample> examples;
  for (long line = 1; begin < bytes.size(); ++line) {
    size_t end = bytes.find('\n', begin);
    if (end == std::string::npos) end = bytes.size();
    std::string_view row(bytes.data() + begin, end - begin);
    begin = end + 1;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);  // CRLF
    if (row.empty()) continue;
    const std::string where = path + ":" + std::to_string(line);
    if (!utf8_valid(row)) utf8_decode(row, where);  // throws, naming the byte
    const size_t tab = row.find('\t');
    if (tab == std::string_view::npos)
      throw Error(where + ": no tab: expected label<TAB>text");
    // A second tab is a third column (an id, a source): folded into the text, it would be read as
    // words. Refused, as translate refuses it.
    if (row.find('\t', tab + 1) != std::string_view::npos)
      throw Error(where + ": more than one tab: expected label<TAB>text (a tab in the text: replace it with a space)");
    LabelledExample e{std::string(row.substr(0, tab)), std::string(row.substr(tab + 1)), line};
    if (e.label.find_first_not_of(" ") == std::string::npos) throw Error(where + ": empty label: expected label<TAB>text");
    // "good " and "good" would be two classes.
    if (e.label.front() == ' ' || e.label.back() == ' ')
      throw Error(where + ": label " + label_text(e.label) + " begins or ends with a space, which would make it a "
                  "class of its own; remove the space");
    // A header would be one more class, of one example.
    if (examples.empty() && (e.label == "label" || e.label == "Label" || e.label == "LABEL"))
      throw Error(where + ": a header line (" + label_text(e.label) + "<TAB>" + label_text(e.text) +
                  "); every line is an example: remove it");
    if (e.text.find_first_not_of(" \t") == std::string::npos) throw Error(where + ": empty text after label " + label_text(e.label));
    examples.push_back(std::move(e));
  }
  if (examples.empty()) throw Error(path + ": no examples (expected label<TAB>text lines)");
  return examples;
}

std::vector<std::string> label_set(const std::vector<LabelledExample>& examples, const std::string& path) {
  std::set<std::string> seen;
  for (const LabelledExample& e : examples) seen.insert(e.label);
  std::vector<std::string> labels(seen.begin(), seen.end());
  if (labels.size() < 2)
    throw Error(path + ": every example has the label " + label_text(labels.at(0)) +
                "; a classifier needs at least two classes");
  return labels;
}

std::vector<int> class_ids(const std::vector<LabelledExample>& examples, const std::vector<std::string>& labels,
                           const std::string& path) {
  std::vector<int> ids;
  ids.reserve(examples.size());
  for (const LabelledExample& e : examples) {
    const auto it = std::find(labels.begin(), labels.end(), e.label);
    if (it == labels.end())
      throw Error(path + ":" + std::to_string(e.line) + ": label " + label_text(e.label) +
                  " was never seen in training (the classes: " + listed(labels) + ")");
    ids.push_back(static_cast<int>(it - labels.begin()));
  }
  return ids;
}

}  // namespace potop
