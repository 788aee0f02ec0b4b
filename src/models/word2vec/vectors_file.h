// Word vectors on disk, in word2vec's two standard formats (what gensim's
// KeyedVectors.load_word2vec_format and fastText's tools read and write):
//   text   (vectors.txt): "<words> <dim>\n", then per word "<word> <v1> ... <vdim>\n"; potop
//          writes each value with 9 significant digits, so a float round-trips exactly;
//   binary (vectors.bin): the same header, then per word "<word> " + dim float32 little-endian
//          + "\n".
// A word2vec directory (potop word2vec train --out DIR) holds vectors.txt, vectors.bin,
// vectors.safetensors ("vectors" (V, dim) the word vectors, "output_vectors" (V, dim) the
// negative-sampling output vectors; metadata: the training options) and vocab.json
// ({"words": [...], "counts": [...], "lowercase": bool, "split": "icu"|"space"}), words by
// decreasing count in every file.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace potop {

struct KeyedVectors {
  std::vector<std::string> words;  // file order (decreasing count for potop's and gensim's files)
  int dim = 0;
  std::vector<float> data;         // (words, dim)
  int size() const { return static_cast<int>(words.size()); }
  const float* row(int i) const { return data.data() + static_cast<size_t>(i) * dim; }
};

// Atomic writes (core/file_io.h).
void write_word2vec_text(const std::filesystem::path& path, const KeyedVectors& v);
void write_word2vec_binary(const std::filesystem::path& path, const KeyedVectors& v);

// Reads either format: a path ending in ".bin" is binary, anything else text; a directory means
// its vectors.bin. Throws potop::Error naming the file (and the line or word) when the header is
// not "<words> <dim>", the file ends before the words its header announces (truncated), holds
// more than them, a row has another number of values than dim, a value is not a number, or a
// word repeats.
KeyedVectors read_word2vec(const std::filesystem::path& path);

}  // namespace potop
