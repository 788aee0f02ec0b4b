// What `potop translate` and `potop attention` do alike with a translation model: a sentence as
// source ids, and the page of its cross-attention.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "models/encoder_decoder/translation_model.h"

namespace potop::cli {

// Source ids of a sentence: its tokens and </s>, cut to the model's block size (announced).
std::vector<int> source_ids(const TranslationModel& m, const std::string& text, const std::string& where);
// The same for any tokenizer and block size.
std::vector<int> source_ids(const Tokenizer& tokenizer, int block, const std::string& text, const std::string& where);

// Writes the cross-attention map of `text` and its `translation` (empty: the model's own, greedy)
// to `out`, for one decoder layer or all (layer < 0), and says so on stderr. Any sequence-to-sequence
// model (nn/tasks.h) with the tokenizer of both its sides.
void write_cross_attention(Seq2Seq& model, const Tokenizer& tokenizer, const std::string& text,
                           const std::string& translation, int layer, const std::filesystem::path& out);

}  // namespace potop::cli
