#include "models/bert/bert_trainer.h"

#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "models/bert/bert.h"
#include "models/bert/bert_kind.h"
#include "models/bert/masked_batches.h"
#include "models/decoder/text_data.h"
#include "train/run_kit.h"

namespace potop {

namespace {

// BERT's [CLS], [SEP] and [PAD] are the tokenizer's <bos>, <eos> and <pad> at potop's ids: a char
// tokenizer has none, GPT-2's byte_bpe others.
void check_specials(const Tokenizer& tokenizer, const std::string& where) {
  if (tokenizer.specials() != kPotopSpecials)
    throw Error(where + ": a " + tokenizer.kind() + " tokenizer lacks potop's <pad>, <bos>, <eos> and <unk> (ids 0..3), "
                "and BERT needs them as [PAD], [CLS] and [SEP]; train one "
                "with potop tokenizer train --kind bpe (or word, unigram, byte) and pass --tokenizer DIR");
}

}  // namespace

RunResult train_bert(const BertOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kBertKind, "potop bert pretrain", log);
  BertOptions options = kit.resume(requested);
  validate(options);
  kit.start(options);
  TokenData data = load_token_data(options, requested, options.model.block_size, kit, [] () -> std::unique_ptr<Tokenizer> {
    throw Error("--init-from: not for potop bert pretrain");
  });
  const Tokenizer& tokenizer = *data.tokenizer;
  check_specials(tokenizer, options.tokenizer.empty() ? options.data : "--tokenizer " + options.tokenizer);
  const BertConfig config = options.model_config(tokenizer.size() + 1);  // + [MASK]
  config.validate("model");
  if (config.mask_in_vocab)
    throw Error("--mask-in-vocab: an imported BERT's vocabulary holds its [MASK]; potop bert pretrain puts [MASK] "
                "after its tokenizer's vocabulary");
  kit.check_config(config, transformer_fields);
  const int B = options.batch_size, T = config.block_size;
  Bert& model = kit.build<Bert>(config, {B, T}, [&](Bert& m) {
    m.init_weights(options.seed);
    if (!options.init_embeddings.empty()) start_embeddings(m.parameters(), tokenizer, options.init_embeddings, log);
  });
  kit.parallel().reserve({B, T});
  const MaskingRule rule = masking_rule(options.mask_fraction, bert_specials(config, tokenizer), tokenizer);
  MaskedBatches batches(kit, data.corpus.train(), data.corpus.val(), B, T, options, rule);

  std::fprintf(log, "%s\n", data.summary.c_str());
  std::fprintf(log, "model: BERT, %d layers, %d heads, %d wide, block %d, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_head, config.n_embd, config.block_size, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
  std::fprintf(log, "masked LM: %d of the %d tokens of each row ([CLS] text [SEP]), 80%% [MASK] / 10%% random / 10%% "
               "kept, a new mask each time (dynamic masking, no next-sentence task)\n",
               masked_count(rule, T - 2), T - 2);
  if (data.unknown.count > 0)
    std::fprintf(log, "note: %s: %s %s (--unknown)\n", options.data.c_str(), data.unknown.describe().c_str(),
                 options.unknown == Unknown::kSkip ? "left out" : "replaced");

  ModelJob job;
  batches.fill(job, kit.parallel());
  job.d_model = config.n_embd;
  job.write_model_files = [&](const nlohmann::json& saved) {
    save_model_files(options.out, kBertKind, to_json(config), tokenizer, saved);
  };
  return kit.run(job, tokenizer, to_json(config), to_json(options), data.hash);
}

}  // namespace potop
