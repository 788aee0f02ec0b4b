// Starting a word-level GPT's token embedding table (wte) from word2vec vectors (potop train
// --tokenizer <word tokenizer> --init-embeddings DIR): the row of every token that is a word of
// the vectors' vocabulary (looked up as spelled, then lowercased) becomes that word's vector;
// other tokens (spaces, punctuation, the specials, words word2vec dropped as rare) keep their
// random init. The copied vectors are scaled by one common factor so that their RMS element
// equals the RMS of the table's random init (N(0, 0.02) for GPT-2): trained word2vec vectors are ~10×
// larger, and the table is also the tied output layer, so unscaled rows would start the logits
// far from uniform. Directions and relative lengths, what word2vec learned, are kept.
#pragma once
#include <string>

#include "tokenizer/word_tokenizer.h"
#include "models/word2vec/vectors_file.h"

namespace potop {

struct EmbeddingInit {
  int copied = 0;   // tokens whose row came from the vectors
  int kept = 0;     // tokens that kept their random row
  double scale = 1; // the factor applied to the vectors
};

// wte (vocab, n_embd) holds the random init. Throws potop::Error naming `source` (the
// --init-embeddings path) when the vectors' dimension is not n_embd or no token is found.
EmbeddingInit init_embeddings(float* wte, int vocab, int n_embd, const WordTokenizer& tokenizer,
                              const KeyedVectors& vectors, const std::string& source);

}  // namespace potop
