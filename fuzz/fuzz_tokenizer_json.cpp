// libFuzzer target: Hugging Face's tokenizer files as `potop import` reads them: tokenizer.json
// (a byte-level BPE, a WordPiece) with the tokenizer_config.json beside it, and the chat template
// that config carries. The input is tokenizer.json, then optionally a line "#config" and the
// config. Any bytes must load or be refused with a potop::Error: never a crash, a hang or another
// exception; what loads must encode and decode a text.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/hf_import.h"
#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir;

void remove_scratch() {
  std::error_code ignored;
  fs::remove_all(scratch_dir, ignored);
}

// A directory of this process's own, made once and removed when the fuzzer exits.
const fs::path& scratch() {
  if (scratch_dir.empty()) {
    scratch_dir = fs::temp_directory_path() / ("potop-fuzz-tokenizer-" + std::to_string(::getpid()));
    fs::create_directories(scratch_dir);
    std::atexit(remove_scratch);
  }
  return scratch_dir;
}

void write(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace potop;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static constexpr std::string_view kSeparator = "\n#config\n";
  const size_t cut = input.find(kSeparator);
  const fs::path dir = scratch();
  write(dir / "tokenizer.json", input.substr(0, cut));
  std::error_code ignored;
  if (cut == std::string_view::npos) {
    fs::remove(dir / "tokenizer_config.json", ignored);
  } else {
    const std::string_view config = input.substr(cut + kSeparator.size());
    write(dir / "tokenizer_config.json", config);
    const nlohmann::json j = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) {
      try {
        (void)hf_chat_template(j, "fuzz: tokenizer_config.json");
      } catch (const Error&) {
      }
    }
  }
  try {
    std::string from;
    const std::unique_ptr<Tokenizer> tokenizer = read_hf_tokenizer(dir, from);
    for (const char* text : {"Pan Kmicic, 1655 r. — żółw 😀", " \n\t a", "[CLS] <|endoftext|>"}) {
      try {
        const std::vector<int> ids = tokenizer->encode(text, "fuzz", Unknown::kReplace, nullptr);
        (void)tokenizer->decode(ids);
        for (int id : ids) (void)tokenizer->decode_one(id), (void)tokenizer->piece(id), (void)tokenizer->char_count(id);
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
