// libFuzzer target: the GGUF reader (checkpoint/gguf_file.h) and the tokenizer a GGUF's metadata
// describes (checkpoint/gguf_import.h). Any bytes as a .gguf file must be read or refused with a
// potop::Error (naming the file): never a crash, a hang, a read past the mapping or another
// exception. What is read is then used as an import would: every small tensor's values, and the
// tokenizer encoding and decoding a text.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/gguf_file.h"
#include "checkpoint/gguf_import.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace potop;
  // The reader maps a file: the bytes become one in memory (no disk), read as /proc/self/fd/N.
  const int fd = ::memfd_create("fuzz.gguf", MFD_CLOEXEC);
  if (fd < 0) return 0;
  for (size_t at = 0; at < size;) {
    const ssize_t n = ::write(fd, data + at, size - at);
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  try {
    const GgufFile file("/proc/self/fd/" + std::to_string(fd));
    for (const GgufTensorInfo& t : file.tensors()) {
      int64_t n = 1;
      for (int64_t d : t.ne) n = d > 0 && n <= (int64_t{1} << 20) / d ? n * d : (int64_t{1} << 21);
      if (n > (int64_t{1} << 20) || !ggml_type_known(t.type)) continue;
      std::vector<float> values(static_cast<size_t>(n));
      file.read_floats(t, values.data());
    }
    std::string from;
    const std::unique_ptr<Tokenizer> tokenizer = read_gguf_tokenizer(file, from);
    if (tokenizer) {
      for (const char* text : {"Pan Kmicic, 1655 r. — żółw 😀", " \n\t a"}) {
        try {
          const std::vector<int> ids = tokenizer->encode(text, "fuzz", Unknown::kReplace, nullptr);
          (void)tokenizer->decode(ids);
          for (int id : ids) (void)tokenizer->decode_one(id), (void)tokenizer->piece(id);
        } catch (const Error&) {
        }
      }
    }
  } catch (const Error&) {
  }
  ::close(fd);
  return 0;
}
