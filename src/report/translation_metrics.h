// Corpus-level translation scores, computed as sacreBLEU computes its defaults, so numbers are
// comparable with published ones:
//   BLEU: 13a tokenisation (mteval-v13a's), n-grams 1..4, mixed case, 'exp' smoothing (a zero
//         n-gram precision counts as 1/(2^k · total), k the number of zero precisions so far),
//         brevity penalty exp(1 - r/c) over the corpus — equal to nltk's corpus_bleu with
//         SmoothingFunction().method3 on 13a-tokenised text.
//   chrF: character n-grams 1..6 with whitespace removed, β = 2, statistics summed over the
//         corpus, precision and recall averaged over the orders present (sacreBLEU's chrF2).
// One reference per sentence.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace potop {

// mteval-v13a's tokenisation: punctuation and symbols split off, periods and commas split off
// unless between digits, a dash after a digit split off. Returns the tokens.
std::vector<std::string> tokenize_13a(std::string_view line);

struct BleuScore {
  double score = 0;            // 0..100
  double precisions[4] = {};   // n-gram precisions in %, smoothed as used
  double brevity_penalty = 0;
  long hyp_len = 0, ref_len = 0;
};
BleuScore corpus_bleu(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

// chrF (β = 2, character n-grams up to 6), 0..100. Texts must be valid UTF-8.
double corpus_chrf(const std::vector<std::string>& hypotheses, const std::vector<std::string>& references);

// How the scores were computed, in sacreBLEU's signature style.
inline constexpr const char* kBleuSignature = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:potop";
inline constexpr const char* kChrfSignature = "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:potop";

}  // namespace potop
