#include "cli/translation_pages.h"

#include <cstdio>

#include "core/error.h"
#include "core/file_io.h"
#include "report/attention_map.h"
#include "tokenizer/utf8.h"

namespace potop::cli {

std::vector<int> source_ids(const TranslationModel& m, const std::string& text, const std::string& where) {
  return source_ids(*m.tokenizer, m.config.block_size, text, where);
}

std::vector<int> source_ids(const Tokenizer& tokenizer, int block, const std::string& text, const std::string& where) {
  std::vector<int> ids = tokenizer.encode(text, where, Unknown::kReplace, nullptr);
  ids.push_back(kEosId);
  if (int(ids.size()) > block) {
    std::fprintf(stderr, "potop: note: %s: %zu tokens, longer than the model's %d: translating the first %d\n",
                 where.c_str(), ids.size() - 1, block, block - 1);
    ids.resize(block);
    ids.back() = kEosId;
  }
  return ids;
}

void write_cross_attention(Seq2Seq& model, const Tokenizer& tokenizer, const std::string& text,
                           const std::string& translation, int layer, const std::filesystem::path& out) {
  if (!utf8_valid(text) || !utf8_valid(translation)) throw Error("--text/--translation: invalid UTF-8");
  const int block = model.context_length();
  const std::vector<int> source = source_ids(tokenizer, block, text, "--text");
  std::vector<int> target = translation.empty()
                                ? model.translate(source, DecodeOptions{})
                                : tokenizer.encode(translation, "--translation", Unknown::kReplace, nullptr);
  if (int(target.size()) + 1 > block) target.resize(block - 1);
  const std::string html = cross_attention_html(model, tokenizer, source, target, layer);
  write_file_atomic(out, html);
  std::fprintf(stderr, "wrote %s (%s -> %s)\n", out.string().c_str(), tokenizer.decode(source).c_str(),
               tokenizer.decode(target).c_str());
}

}  // namespace potop::cli
