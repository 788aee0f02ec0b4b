#include "models/word2vec/analogy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_set>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_tokenizer.h"

namespace potop {
namespace {

void unit_length(float* x, int n) {
  double norm = 0;
  for (int i = 0; i < n; ++i) norm += static_cast<double>(x[i]) * x[i];
  if (norm == 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

std::vector<std::string> split_spaces(const std::string& line) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) parts.push_back(line.substr(i, j - i));
    i = j;
  }
  return parts;
}

}  // namespace

VectorIndex::VectorIndex(KeyedVectors vectors) : v_(std::move(vectors)), unit_(v_.data) {
  for (int i = 0; i < v_.size(); ++i) {
    unit_length(unit_.data() + static_cast<size_t>(i) * v_.dim, v_.dim);
    index_.emplace(v_.words[static_cast<size_t>(i)], i);
  }
}

int VectorIndex::id_of(const std::string& word) const {
  auto it = index_.find(word);
  return it == index_.end() ? -1 : it->second;
}

float VectorIndex::cosine(int a, int b) const {
  const float* x = unit_.data() + static_cast<size_t>(a) * v_.dim;
  const float* y = unit_.data() + static_cast<size_t>(b) * v_.dim;
  float s = 0;
  for (int i = 0; i < v_.dim; ++i) s += x[i] * y[i];
  return s;
}

std::vector<std::pair<int, float>> VectorIndex::most_similar(const std::vector<int>& positive,
                                                             const std::vector<int>& negative, int k,
                                                             int restrict) const {
  const int D = v_.dim;
  std::vector<float> mean(static_cast<size_t>(D), 0.0f);
  for (int id : positive)
    for (int i = 0; i < D; ++i) mean[i] += unit_[static_cast<size_t>(id) * D + i];
  for (int id : negative)
    for (int i = 0; i < D; ++i) mean[i] -= unit_[static_cast<size_t>(id) * D + i];
  const float n = static_cast<float>(positive.size() + negative.size());
  for (float& x : mean) x /= n;
  unit_length(mean.data(), D);
  const int V = restrict > 0 ? std::min(restrict, v_.size()) : v_.size();
  std::vector<float> score(static_cast<size_t>(V));
#pragma omp parallel for schedule(static) if (V > 20000)
  for (int w = 0; w < V; ++w) {
    const float* u = unit_.data() + static_cast<size_t>(w) * D;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int i = 0; i < D; ++i) s += u[i] * mean[i];
    score[w] = s;
  }
  std::unordered_set<int> exclude(positive.begin(), positive.end());
  exclude.insert(negative.begin(), negative.end());
  std::vector<int> ids;
  ids.reserve(static_cast<size_t>(V));
  for (int w = 0; w < V; ++w)
    if (!exclude.count(w)) ids.push_back(w);
  const size_t top = std::min<size_t>(static_cast<size_t>(std::max(k, 0)), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<long>(top), ids.end(), [&](int a, int b) {
    return score[a] != score[b] ? score[a] > score[b] : a < b;
  });
  std::vector<std::pair<int, float>> out;
  for (size_t i = 0; i < top; ++i) out.emplace_back(ids[i], score[ids[i]]);
  return out;
}

AnalogyReport evaluate_analogies(const VectorIndex& index, const std::filesystem::path& file, int restrict) {
  std::string text = read_file(file);
  const std::string name = file.string();
  if (!utf8_valid(text)) throw Error(name + ": is not valid UTF-8");
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // a byte-order mark, as editors on Windows write
  const char* format = "(questions-words.txt format: a ': section' line, then questions of 4 words, one a line)";
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw Error(name + ": holds no analogy question " + format);
  const KeyedVectors& v = index.vectors();
  const int known = std::min(restrict, v.size());
  // Lowercased spelling -> id among the `known` most frequent; the most frequent spelling wins.
  std::unordered_map<std::string, int> ok;
  for (int i = known - 1; i >= 0; --i) ok[lowercase_text(v.words[static_cast<size_t>(i)])] = i;

  AnalogyReport report;
  long line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.rfind(": ", 0) == 0) {
      std::string section = line.substr(2);
      while (!section.empty() && std::isspace(static_cast<unsigned char>(section.back()))) section.pop_back();
      report.sections.push_back(AnalogySection{section});
      continue;
    }
    if (report.sections.empty()) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // a blank line
      throw Error(name + ": line " + std::to_string(line_number) + ": a question before any ': section' line");
    }
    const std::vector<std::string> words = split_spaces(lowercase_text(line));
    if (words.size() != 4) {
      report.malformed_lines.push_back(line_number);
      continue;
    }
    AnalogySection& section = report.sections.back();
    int ids[4];
    bool all_known = true;
    for (int i = 0; i < 4; ++i) {
      auto it = ok.find(words[static_cast<size_t>(i)]);
      all_known = all_known && it != ok.end();
      ids[i] = it == ok.end() ? -1 : it->second;
    }
    if (!all_known) {
      ++section.skipped;
      ++report.total.skipped;
      continue;
    }
    bool correct = false;
    for (const auto& [id, score] : index.most_similar({ids[1], ids[2]}, {ids[0]}, 5, known)) {
      const std::string guess = lowercase_text(v.words[static_cast<size_t>(id)]);
      if (guess == words[0] || guess == words[1] || guess == words[2]) continue;
      correct = guess == words[3];
      break;
    }
    ++(correct ? section.correct : section.incorrect);
    ++(correct ? report.total.correct : report.total.incorrect);
  }
  if (report.total.correct + report.total.incorrect + report.total.skipped == 0) {
    const size_t bad = report.malformed_lines.size();
    throw Error(name + ": holds no analogy question: " +
                (bad > 0 ? std::to_string(bad) + " line(s) after its sections are not 4 words (line " +
                               std::to_string(report.malformed_lines[0]) + " the first) "
                         : std::string("its sections have no line of 4 words ")) +
                format);
  }
  return report;
}

}  // namespace potop
