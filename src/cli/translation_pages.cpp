#include "cli/translation_pages.h"

#include <cstdio>

#include "core/error.h"
#include "core/file_io.h"
#include "report/attention_map.h"
#include "models/encoder_decoder/translator.h"
#include "tokenizer/utf8.h"

namespace potop::cli {

std::vector<int> source_ids(const TranslationModel& m, const std::string& text, const std::string& where) {
  std::vector<int> ids = m.tokenizer->encode(text, where, Unknown::kReplace, nullptr);
  ids.push_back(kEosId);
  const int block = m.config.block_size;
  if (int(ids.size()) > block) {
    std::fprintf(stderr, "potop: note: %s: %zu tokens, longer than the model's %d: translating the first %d\n",
                 where.c_str(), ids.size() - 1, block, block - 1);
    ids.resize(block);
    ids.back() = kEosId;
  }
  return ids;
}

void write_cross_attention(TranslationModel& m, const std::string& text, const std::string& translation, int layer,
                           const std::filesystem::path& out) {
  if (!utf8_valid(text) || !utf8_valid(translation)) throw Error("--text/--translation: invalid UTF-8");
  const std::vector<int> source = source_ids(m, text, "--text");
  std::vector<int> target = translation.empty()
                                ? translate_ids(*m.model, source, DecodeOptions{})
                                : m.tokenizer->encode(translation, "--translation", Unknown::kReplace, nullptr);
  if (int(target.size()) + 1 > m.config.block_size) target.resize(m.config.block_size - 1);
  const std::string html = cross_attention_html(*m.model, *m.tokenizer, source, target, layer);
  write_file_atomic(out, html);
  std::fprintf(stderr, "wrote %s (%s -> %s)\n", out.string().c_str(), m.tokenizer->decode(source).c_str(),
               m.tokenizer->decode(target).c_str());
}

}  // namespace potop::cli
