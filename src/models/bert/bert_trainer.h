// `potop bert pretrain`: BERT's setup — the GPT's data (a text or a prepared directory, a
// tokenizer with special tokens), the model, the masked batches — and the job the run kit runs:
// resume, --force, MPI, signals, progress, metrics and checkpoints as for every trainer.
#pragma once
#include <cstdio>

#include "models/bert/bert_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {


RunResult train_bert(const BertOptions& options, std::FILE* log = stderr, const RunControl& control = {});

}  // namespace potop
