#include "report/translation_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// n-gram -> count; the tokens of an n-gram joined by '\x01' (the keys of one order are only
// compared with keys of the same order, so a token holding '\x01' cannot fake a match).
using Counts = std::unordered_map<std::string, int>;

Counts ngrams(const std::vector<std::string>& tokens, int n) {
  Counts c;
  for (size_t i = 0; i + n <= tokens.size(); ++i) {
    std::string key = tokens[i];
    for (int k = 1; k < n; ++k) key.append("\x01").append(tokens[i + k]);
    ++c[key];
  }
  return c;
}

}  // namespace

std::vector<std::string> tokenize_13a(std::string_view input) {
  // sacreBLEU's TokenizerV13a, step by step.
  std::string line(input);
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  std::replace(line.begin(), line.end(), '\n', ' ');
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  line = " " + line + " ";
  // Punctuation and symbols: { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
  static const std::regex symbols("([{-~\\[-\\x60 -&(-+:-@/])");
  static const std::regex period_comma_after("([^0-9])([\\.,])");
  static const std::regex period_comma_before("([\\.,])([^0-9])");
  static const std::regex dash_after_digit("([0-9])(-)");
  line = std::regex_replace(line, symbols, " $1 ");
  line = std::regex_replace(line, period_comma_after, "$1 $2 ");
  line = std::regex_replace(line, period_comma_before, " $1 $2");
  line = std::regex_replace(line, dash_after_digit, "$1 $2 ");
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) tokens.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return tokens;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  POTOP_CHECK(hypotheses.size() == references.size(), "one reference per hypothesis");
  long correct[4] = {}, total[4] = {};
  BleuScore s;
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const auto hyp = tokenize_13a(hypotheses[i]), ref = tokenize_13a(references[i]);
    s.hyp_len += long(hyp.size()), s.ref_len += long(ref.size());
    for (int n = 1; n <= 4; ++n) {
      const Counts h = ngrams(hyp, n), r = ngrams(ref, n);
      for (const auto& [gram, count] : h) {
        const auto it = r.find(gram);
        correct[n - 1] += std::min(count, it == r.end() ? 0 : it->second);
        total[n - 1] += count;
      }
    }
  }
  // 'exp' smoothing; an order with no n-gram at all leaves that precision 0 (score 0).
  double smooth = 1, log_sum = 0;
  for (int n = 0; n < 4; ++n) {
    if (total[n] == 0) {
      s.precisions[n] = 0;
      continue;
    }
    if (correct[n] == 0) {
      smooth *= 2;
      s.precisions[n] = 100.0 / (smooth * double(total[n]));
    } else {
      s.precisions[n] = 100.0 * double(correct[n]) / double(total[n]);
    }
  }
  bool zero = false;
  for (int n = 0; n < 4; ++n) {
    if (s.precisions[n] <= 0) zero = true;
    else log_sum += std::log(s.precisions[n]);
  }
  s.brevity_penalty = s.hyp_len == 0 ? 0.0 : s.hyp_len < s.ref_len ? std::exp(1.0 - double(s.ref_len) / double(s.hyp_len)) : 1.0;
  s.score = zero ? 0.0 : s.brevity_penalty * std::exp(log_sum / 4.0);
  return s;
}

double corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references) {
  POTOP_CHECK(hypotheses.size() == references.size(), "one reference per hypothesis");
  constexpr int kOrder = 6;
  constexpr double kBeta = 2.0;
  double n_hyp[kOrder] = {}, n_ref[kOrder] = {}, n_match[kOrder] = {};
  auto chars = [](const std::string& text) {  // code points, whitespace removed
    std::u32string out;
    for (char32_t c : utf8_decode(text, "chrF input"))
      if (!(c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || c == U'\v' || c == U'\f')) out += c;
    return out;
  };
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    const std::u32string h = chars(hypotheses[i]), r = chars(references[i]);
    for (int n = 1; n <= kOrder; ++n) {
      std::map<std::u32string, int> hc, rc;
      for (size_t k = 0; k + n <= h.size(); ++k) ++hc[h.substr(k, n)];
      for (size_t k = 0; k + n <= r.size(); ++k) ++rc[r.substr(k, n)];
      for (const auto& [gram, count] : hc) {
        n_hyp[n - 1] += count;
        const auto it = rc.find(gram);
        if (it != rc.end()) n_match[n - 1] += std::min(count, it->second);
      }
      for (const auto& [gram, count] : rc) n_ref[n - 1] += count;
    }
  }
  const double eps = 1e-16, factor = kBeta * kBeta;
  double avg_prec = 0, avg_rec = 0;
  int effective = 0;
  for (int n = 0; n < kOrder; ++n) {
    avg_prec += n_hyp[n] > 0 ? n_match[n] / n_hyp[n] : eps;
    avg_rec += n_ref[n] > 0 ? n_match[n] / n_ref[n] : eps;
    effective += n_hyp[n] > 0 && n_ref[n] > 0;
  }
  if (effective == 0) return 0.0;
  avg_prec /= effective, avg_rec /= effective;
  if (avg_prec + avg_rec == 0) return 0.0;
  return 100.0 * (1 + factor) * avg_prec * avg_rec / (factor * avg_prec + avg_rec);
}

}  // namespace potop
