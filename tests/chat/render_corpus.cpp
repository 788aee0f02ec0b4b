// Renders many conversations under many chat templates in one process, as `potop chat-template
// SRC --messages FILE` renders one (serve/chat_template_source.h): tests/cli/chat_template.sh
// checks the contexts of tests/chat/cases (590) with it, where a potop process per context
// spent most of the test starting processes. Reads lines "SRC<TAB>FILE<TAB>OUT" from stdin; for
// each writes OUT.out, the prompt, or OUT.err, the line potop prints on stderr when it refuses
// (its exit status would be 1).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <new>
#include <string>

#include "serve/chat_template_source.h"

namespace {

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "render_corpus: cannot write %s\n", path.c_str());
    std::exit(2);
  }
}

// What potop's main prints for an error thrown by the command (src/cli/main.cpp).
std::string refusal(const std::string& what) { return "potop: error: " + what + "\n"; }

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    if (a == std::string::npos || b == std::string::npos) {
      std::fprintf(stderr, "render_corpus: expected SRC<TAB>FILE<TAB>OUT, got: %s\n", line.c_str());
      return 2;
    }
    const std::string source = line.substr(0, a), messages = line.substr(a + 1, b - a - 1), out = line.substr(b + 1);
    try {
      const potop::serve::ChatTemplate t = potop::serve::chat_template_from_source(source);
      write_file(out + ".out", potop::serve::render_conversation_file(t, messages, true));
    } catch (const std::bad_alloc&) {
      write_file(out + ".err", refusal("out of memory (try a smaller --batch-size, --block-size or model)"));
    } catch (const std::exception& e) {  // potop::Error and the rest: main prints each the same way
      write_file(out + ".err", refusal(e.what()));
    }
  }
  return 0;
}
