// `potop bow train`: the bag-of-words LM's setup — read the text, build (or load) the word
// tokenizer, split the words, build the model (and an idf model's table of document
// frequencies) — and the job the run harness (run.h) runs, exactly as the GPT's trainer does:
// train_step over BatchParallel replicas, AdamW, evaluation, checkpoints, resume, signals.
#pragma once
#include <cstdio>
#include <span>
#include <vector>

#include "models/bow/bow_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {

// The idf table's inputs from a training text's ids: one document per line (the ids between two
// occurrences of newline_id; a text without that id is one document). df[w] counts the
// documents that contain w. Returns the number of non-empty documents.
long document_frequencies(std::span<const int> tokens, int newline_id, int vocab_size, std::vector<long>& df);

// control: resume (a model directory of potop bow train or one of its state files), given (the
// flags set on the command line, which override the checkpoint's on resume), force,
// stop_requested; allow_data_change is honoured as in potop train.
RunResult train_bow(const BowOptions& options, std::FILE* log = stderr, const RunControl& control = {});

}  // namespace potop
