#include "data/parallel_corpus.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "data/text_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace {

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

PairFile read_pairs(const fs::path& path, BadLines bad_lines) {
  std::string text = read_text_file(path);
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // the byte-order mark
  PairFile out;
  size_t start = 0;
  int line_no = 0;
  auto bad = [&](const std::string& what) {
    const std::string where = "line " + std::to_string(line_no) + ": " + what;
    if (bad_lines == BadLines::kError)
      throw Error(path.string() + ":" + std::to_string(line_no) + ": " + what + " (expected SOURCE<tab>TARGET; "
                  "--bad-lines skip leaves such lines out)");
    ++out.skipped;
    if (out.notes.size() < 5) out.notes.push_back(where);
  };
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!utf8_valid(line))
      throw Error(path.string() + ":" + std::to_string(line_no) + ": invalid UTF-8 (the pairs must be UTF-8 text)");
    if (line.empty()) continue;  // an empty line separates nothing: not counted as bad
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      bad("no tab");
      continue;
    }
    if (line.find('\t', tab + 1) != std::string_view::npos) {
      bad("more than one tab");
      continue;
    }
    const std::string_view first = line.substr(0, tab), second = line.substr(tab + 1);
    if (blank(first) || blank(second)) {
      bad(std::string("empty ") + (blank(first) ? "first" : "second") + " column");
      continue;
    }
    out.pairs.push_back({std::string(first), std::string(second), line_no});
  }
  if (out.pairs.empty()) throw Error(path.string() + ": no sentence pair (expected lines SOURCE<tab>TARGET)");
  return out;
}

std::optional<PairColumns> parse_pair_columns(const std::string& columns) {
  const size_t comma = columns.find(',');
  if (comma == std::string::npos || columns.find(',', comma + 1) != std::string::npos) return std::nullopt;
  return PairColumns{columns.substr(0, comma), columns.substr(comma + 1)};
}

std::string describe_skipped(const std::string& path, const PairFile& file) {
  if (file.skipped == 0) return "";
  std::string s = path + ": " + std::to_string(file.skipped) + (file.skipped == 1 ? " bad line" : " bad lines") +
                  " skipped: ";
  for (size_t i = 0; i < file.notes.size(); ++i) s += (i > 0 ? ", " : "") + file.notes[i];
  if (file.skipped > int(file.notes.size())) s += ", and " + std::to_string(file.skipped - int(file.notes.size())) + " more";
  return s;
}

int held_out_count(int n, double fraction, int cap) {
  if (fraction <= 0 || cap <= 0 || n <= 0) return 0;
  const long wanted = std::max(1L, std::lround(fraction * n));
  return int(std::min<long>(wanted, cap));
}

PairSplit split_pairs(const std::vector<SentencePair>& pairs, int dev_size, int test_size, uint64_t seed) {
  const int n = static_cast<int>(pairs.size());
  if (dev_size < 0 || test_size < 0 || dev_size + test_size >= n)
    throw Error("--dev-size " + std::to_string(dev_size) + " and --test-size " + std::to_string(test_size) +
                " leave no training pairs of " + std::to_string(n));
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  Rng(seed).shuffle(order);
  PairSplit split;
  for (int i = 0; i < n; ++i) {
    const SentencePair& p = pairs[order[i]];
    (i < dev_size ? split.dev : i < dev_size + test_size ? split.test : split.train).push_back(p);
  }
  // Dev and test in file order, for people reading them.
  auto by_line = [](const SentencePair& a, const SentencePair& b) { return a.line < b.line; };
  std::sort(split.dev.begin(), split.dev.end(), by_line);
  std::sort(split.test.begin(), split.test.end(), by_line);
  return split;
}

void write_pairs(const fs::path& path, const std::vector<SentencePair>& pairs) {
  std::string out;
  for (const SentencePair& p : pairs) out.append(p.first).append("\t").append(p.second).append("\n");
  write_file_atomic(path, out);
}

PairBatches::PairBatches(const std::vector<EncodedPair>& examples, int batch_tokens, uint64_t seed)
    : examples_(examples), seed_(seed) {
  POTOP_CHECK(!examples.empty() && batch_tokens > 0, "no examples to batch");
  std::vector<int> idx(examples.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
    const auto la = std::pair(examples[a].source.size(), examples[a].target.size());
    const auto lb = std::pair(examples[b].source.size(), examples[b].target.size());
    return la < lb;
  });
  std::vector<int> current;
  size_t longest = 0;
  for (int i : idx) {
    const size_t len = std::max(examples[i].source.size(), examples[i].target.size() + 1);
    target_tokens_ += long(examples[i].target.size()) + 1;
    if (!current.empty() && (current.size() + 1) * std::max(longest, len) > size_t(batch_tokens)) {
      batches_.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(i);
    longest = std::max(longest, len);
  }
  if (!current.empty()) batches_.push_back(std::move(current));
}

void PairBatches::fill(long k, Batch& batch) {
  const long epoch = k / size();
  if (epoch != cached_epoch_) {
    order_.resize(batches_.size());
    std::iota(order_.begin(), order_.end(), 0);
    Rng(hash64(seed_, uint64_t(epoch))).shuffle(order_);
    cached_epoch_ = epoch;
  }
  fill_members(batches_[order_[k % size()]], batch);
}

void PairBatches::fill_sorted(int i, Batch& batch) { fill_members(batches_[i], batch); }

void PairBatches::fill_members(const std::vector<int>& members, Batch& batch) {
  rows_.clear();
  for (int i : members) rows_.push_back(&examples_[i]);
  arrays_.fill(rows_, batch);
}

void PairBatchArrays::fill(const std::vector<const EncodedPair*>& rows, Batch& batch) {
  const int B = static_cast<int>(rows.size());
  int S = 1, T = 1;
  for (const EncodedPair* e : rows) {
    S = std::max(S, int(e->source.size()));
    T = std::max(T, int(e->target.size()) + 1);
  }
  source.assign(size_t(B) * S, kPadId);
  lengths.assign(B, 0);
  input.assign(size_t(B) * T, kPadId);
  targets.assign(size_t(B) * T, -1);
  for (int b = 0; b < B; ++b) {
    const EncodedPair& e = *rows[b];
    std::copy(e.source.begin(), e.source.end(), source.begin() + long(b) * S);
    lengths[b] = int(e.source.size());
    int* in = input.data() + size_t(b) * T;
    int* tg = targets.data() + size_t(b) * T;
    in[0] = kBosId;  // <s> y_1 … y_n   ->   y_1 … y_n </s>
    for (size_t t = 0; t < e.target.size(); ++t) in[t + 1] = tg[t] = e.target[t];
    tg[e.target.size()] = kEosId;
  }
  batch = Batch{};
  batch.B = B, batch.T = T, batch.S = S;
  batch.tokens = input.data(), batch.targets = targets.data();
  batch.source = source.data(), batch.source_lengths = lengths.data();
}

}  // namespace potop
