// `potop classify train`: a text classifier fine-tuned from a GPT's or a BERT's body
// (--init-from) or trained from scratch, on label<TAB>text examples, with the run kit's resume,
// --force, ranks, signals and checkpoints. Every --eval-interval steps (default: each epoch) it
// scores the dev set: its loss and accuracy are printed and logged, the best dev accuracy picks
// best.safetensors, and --patience evaluations without a better one stop the run.
#pragma once
#include <cstdio>

#include "models/classifier/classifier_options.h"
#include "train/run.h"
#include "train/run_control.h"

namespace potop {

RunResult train_classifier(const ClassifierOptions& options, std::FILE* log = stderr, const RunControl& control = {});

}  // namespace potop
