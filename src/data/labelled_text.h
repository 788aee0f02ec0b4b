// Labelled text for classifiers: a TSV file of `label<TAB>text` lines (GLUE's SST-2 and TREC as
// Hugging Face's run_glue.py reads them, without a header line).
//
//   - a UTF-8 byte-order mark at the start and CRLF line ends are accepted (and dropped);
//   - empty lines are skipped; the label is everything before the first tab, the text everything
//     after it (a text may hold more tabs);
//   - a line without a tab, with an empty label or an empty text, and invalid UTF-8 are an Error
//     naming the file and line.
// The classes are the training file's labels in sorted order (run_glue.py sorts its label list),
// so class ids do not depend on the order of the lines; a training set of one class is refused,
// and so is a dev or test label that training never saw.
#pragma once
#include <string>
#include <vector>

namespace potop {

struct LabelledExample {
  std::string label, text;  // UTF-8
  long line = 0;            // 1-based line of the file, for messages
};

// Every example of the file, in order. Throws potop::Error "<path>:<line>: ..." for a bad line,
// and "<path>: no examples" for a file without any.
std::vector<LabelledExample> read_labelled_tsv(const std::string& path);

// The classes of a training set: its distinct labels, sorted. Fewer than two is an Error naming
// the file (a classifier of one class has nothing to learn).
std::vector<std::string> label_set(const std::vector<LabelledExample>& examples, const std::string& path);

// The class id of each example in `labels`; a label not among them is an Error naming the file,
// the line, the label and the known ones.
std::vector<int> class_ids(const std::vector<LabelledExample>& examples, const std::vector<std::string>& labels,
                           const std::string& path);

}  // namespace potop
