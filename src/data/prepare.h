// `potop prepare`: tokenize a corpus of any size once, into a data directory of binary shards
// (data/data_format.h, docs/data.md) that training memory-maps.
//
// The corpus (data/corpus_files.h: a file, or every text file under a directory) is read in
// chunks that end at line boundaries; each round reads up to 2 x threads chunks, encodes them in
// parallel (OpenMP, Tokenizer::encode called concurrently) and appends their ids to the shards in
// input order. Memory is bounded by the round (about 2 x threads x chunk_bytes of text and the
// ids and working memory of encoding them), never by the corpus.
//
// Everything is written into "<out>.partial-<pid>" beside --out and renamed to --out only when
// complete (an existing data directory is swapped out atomically with --force), so an
// interrupted or failed prepare leaves --out as it was.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "data/data_format.h"
#include "tokenizer/tokenizer.h"

namespace potop {

struct PrepareOptions {
  std::filesystem::path data;  // a text file or a directory of them
  std::filesystem::path out;   // the data directory to write
  double val_fraction = 0.1;   // in [0, 1); 0: no validation split
  SplitBy split = SplitBy::kTail;
  Unknown unknown = Unknown::kError;  // text the tokenizer cannot express: refuse, skip, replace
  size_t chunk_bytes = size_t{1} << 20;
  uint64_t shard_tokens = 0;  // ids per shard; 0: kDefaultShardBytes worth
  bool force = false;         // replace an existing data directory at --out
};

struct PrepareProgress {
  const char* phase = "tokenize";  // or "vocabulary": the first pass that builds a char tokenizer
  uint64_t bytes_done = 0, bytes_total = 0, tokens = 0;
  size_t files_done = 0, files_total = 0;
};

struct PrepareResult {
  DataManifest manifest;
  std::filesystem::path out;
  bool replaced = false;      // --force replaced a data directory
  UnknownReport unknown;      // what --unknown skip/replace left out or replaced
  std::string unknown_file;   // the first file where that happened
  size_t skipped_empty = 0, skipped_hidden = 0, skipped_special = 0;
  // Partial outputs of earlier runs that were killed (OUT.partial-PID of a process no longer
  // running), removed, with their sizes in bytes.
  std::vector<std::pair<std::filesystem::path, uintmax_t>> removed_partials;
};

// Throws potop::Error naming the culprit for every bad input, before writing anything when it
// can be known in advance (flags, the corpus listing, --out), and otherwise (invalid UTF-8 or a
// NUL byte in a file, with its byte offset and line; text the tokenizer cannot express; a full
// disk; stop() turning true) after removing what it wrote. progress is called after every round.
//
// tokenizer null: a char tokenizer of the corpus, built by a first pass over it (bounded rounds
// like the encoding pass), which is what `potop train` builds from a text.
PrepareResult prepare_data(const PrepareOptions& options, const Tokenizer* tokenizer,
                           const std::function<void(const PrepareProgress&)>& progress = {},
                           const std::function<bool()>& stop = {});

}  // namespace potop
