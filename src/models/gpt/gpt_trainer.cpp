#include "models/gpt/gpt_trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "checkpoint/model_dir.h"
#include "checkpoint/train_state.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "core/profile.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/prepared_data.h"
#include "data/text_file.h"
#include "data/token_corpus.h"
#include "kernels/gemm.h"
#include "models/gpt/gpt.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_tokenizer.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "train/memory_check.h"
#include "train/resume.h"
#include "train/run.h"
#include "train/schedule.h"
#include "models/word2vec/init_embeddings.h"

namespace potop {

namespace {

// --init-embeddings: the token table's rows of the words word2vec knows (word2vec/init_embeddings.h).
void start_embeddings(GPT& model, const Tokenizer& tokenizer, const std::string& vectors_path, std::FILE* log) {
  const auto* words = dynamic_cast<const WordTokenizer*>(&tokenizer);
  if (!words)
    throw Error("--init-embeddings needs a word tokenizer (--tokenizer DIR of kind word), not a " + tokenizer.kind() +
                " tokenizer: word2vec vectors are per word");
  ParameterSet& params = model.parameters();
  const auto& specs = params.layout().specs();
  const auto wte = std::find_if(specs.begin(), specs.end(), [](const TensorSpec& s) { return s.name == "wte.weight"; });
  POTOP_CHECK(wte != specs.end(), "the GPT has no wte.weight");
  const EmbeddingInit r = init_embeddings(params.values().at(*wte), static_cast<int>(wte->shape[0]),
                                          static_cast<int>(wte->shape[1]), *words, read_word2vec(vectors_path),
                                          vectors_path);
  std::fprintf(log, "init-embeddings: %d of %d token embeddings from %s (scaled by %.4g to the init's size); %d kept "
               "their random init\n", r.copied, r.copied + r.kept, vectors_path.c_str(), r.scale, r.kept);
}

// The model of a fine-tuning run: the base model's shape. A shape flag given with another value
// is refused (the weights could not be used); dropout is the run's own when given.
GPTConfig fine_tuned_config(const GPTConfig& base, const GPTConfig& requested, const std::vector<std::string>& given,
                            const std::string& init_from) {
  GPTConfig config = base, want = requested;
  const std::vector<Field> have = gpt_fields(config), asked = gpt_fields(want);
  const nlohmann::json a = to_json(config), b = to_json(want);
  std::string refused;
  for (size_t i = 0; i < have.size(); ++i) {
    const bool is_given = std::find(given.begin(), given.end(), have[i].name) != given.end();
    if (!is_given) continue;
    const std::string key = have[i].json_key();
    if (have[i].shape && a[key] != b[key])
      refused += (refused.empty() ? "" : ", ") + ("--" + have[i].name + " " + b[key].dump() + " (the model has " +
                                                   a[key].dump() + ")");
    else copy_value(asked[i], have[i]);
  }
  if (!refused.empty())
    throw Error("--init-from " + init_from + ": cannot change " + refused +
                ": fine-tuning keeps the model's shape; drop the flag");
  return config;
}

}  // namespace

TrainResult train(const TrainOptions& requested, std::FILE* log, const TrainControl& control) {
  // Options: the command line's, or on resume the checkpoint's with the given ones on top.
  const bool resuming = !control.resume.empty();
  std::optional<SafetensorsFile> state_file;
  TrainState state;
  TrainOptions options = requested;
  std::vector<std::string> changes;
  fs::path resume_dir;
  if (resuming) {
    state_file.emplace(resolve_resume_path(control.resume, resume_dir));
    state = read_train_state(*state_file);
    options = resume_options(state, requested, control.given, resume_dir, control.allow_data_change, changes);
  }
  validate(options);
  apply_threads_flag(options.threads);
  // The ranks of a multi-process run; rank 0 alone writes files and prints.
  SingleProcess one_process;
  Communicator& comm = control.ranks ? *control.ranks->comm : static_cast<Communicator&>(one_process);
  const int P = comm.size();
  const bool writer = comm.rank() == 0;
  // Ranks on one machine share its cores unless --threads says otherwise.
  if (P > 1 && options.threads == 0) set_threads(std::max(1, hardware_threads() / comm.local_size()));
  profile::enable(options.profile);
  const fs::path out = options.out;

  // Data: text -> code points -> ids -> train/val split, or prepared data. A resumed run keeps
  // its vocabulary.
  const bool data_given = std::find(control.given.begin(), control.given.end(), "data") != control.given.end();
  if (resuming && !data_given && !fs::exists(options.data))
    throw Error("--resume " + resume_dir.string() + ": the training text " + options.data +
                " named by the checkpoint is not found (a path relative to where the run started?); pass --data");
  if (resuming && (!requested.tokenizer.empty() || !requested.init_from.empty()))
    throw Error(std::string(requested.tokenizer.empty() ? "--init-from" : "--tokenizer") +
                " starts a new run; a resumed run keeps its model and tokenizer");
  if (resuming && !requested.init_embeddings.empty())
    throw Error("--init-embeddings starts a new run; a resumed run keeps its weights");
  // --data is a text file (read and encoded here, in memory) or a data directory written by
  // potop prepare (memory-mapped shards, already encoded and split).
  std::optional<PreparedData> prepared;
  std::string text_utf8;
  std::u32string text;
  uint64_t data_hash = 0;
  if (is_data_directory(options.data)) {
    prepared.emplace(PreparedData::open(options.data));
    data_hash = prepared->content_hash();
    // Its split was made by potop prepare: a different --val-fraction cannot apply.
    const double f = prepared->manifest().val_fraction;
    const bool fraction_given =
        std::find(control.given.begin(), control.given.end(), "val-fraction") != control.given.end();
    if (fraction_given && requested.val_fraction != f)
      throw Error("--val-fraction " + nlohmann::json(requested.val_fraction).dump() + ": " + options.data +
                  " was split by potop prepare (val_fraction " + nlohmann::json(f).dump() +
                  "); prepare it again with that --val-fraction, or leave the flag out");
    options.val_fraction = f;
  } else {
    text_utf8 = read_utf8_text(options.data);
    text = utf8_decode(text_utf8, options.data);
    data_hash = hash_training_text(text);
  }
  // The tokenizer: the resumed run's, the fine-tuned model's, a given directory's, the prepared
  // data's, or one token per character of the text. Prepared ids must be of that tokenizer.
  std::unique_ptr<Tokenizer> tokenizer;
  std::optional<LoadedGpt> base;  // --init-from
  if (resuming) {
    tokenizer = load_tokenizer_dir(out);
    if (tokenizer->hash() != state.vocab_hash) {
      throw Error(tokenizer_file_in(out, tokenizer->kind()).string() + ": does not match the vocabulary of " + state_file->path() + " (hash " +
                  hash_hex(tokenizer->hash()) + " vs " + hash_hex(state.vocab_hash) + ")");
    }
    if (prepared) check_tokenizer(*prepared, *tokenizer, "the tokenizer of the run in " + out.string());
    if (data_hash != state.data_hash && !control.allow_data_change)
      throw Error("--data " + options.data + ": differs from the " + (prepared ? "data" : "text") + " the run in " +
                  out.string() + " was trained on (hash " + hash_hex(data_hash) + ", the checkpoint has " +
                  hash_hex(state.data_hash) + " from " + state.options.value("data", std::string("?")) +
                  "); pass --allow-data-change to continue on this " + (prepared ? "data" : "text"));
  } else if (!options.init_from.empty()) {
    base.emplace(load_gpt_dir(options.init_from));
    options.model = fine_tuned_config(base->config, options.model, control.given, options.init_from);
    tokenizer = std::move(base->tokenizer);
    if (prepared) check_tokenizer(*prepared, *tokenizer, "the tokenizer of --init-from " + options.init_from);
  } else if (!options.tokenizer.empty()) {
    tokenizer = load_tokenizer_dir(options.tokenizer);
    if (prepared) check_tokenizer(*prepared, *tokenizer, "--tokenizer " + options.tokenizer);
  } else if (prepared) {
    const fs::path dir = fs::path(options.data) / kTokenizerDir;
    tokenizer = load_tokenizer_dir(dir);
    check_tokenizer(*prepared, *tokenizer, "its copy in " + dir.string());
  } else {
    tokenizer = std::make_unique<CharTokenizer>(CharTokenizer::from_text(text));
  }
  UnknownReport unknown;
  TokenCorpus corpus;
  if (prepared) {
    check_block_size(*prepared, options.model.block_size);
    corpus = TokenCorpus::prepared(std::move(*prepared));
  } else {
    // Characters the vocabulary lacks are all counted first, so that refusing them names them all.
    const Unknown policy = options.unknown == Unknown::kError ? Unknown::kSkip : options.unknown;
    const std::vector<int> tokens = tokenizer->encode(text_utf8, options.data, policy, &unknown);
    if (unknown.count > 0 && options.unknown == Unknown::kError)
      throw Error(options.data + ": " + unknown.describe() + ", which the model never saw in training; pass --unknown "
                  "skip or --unknown replace to train on the rest");
    corpus = TokenCorpus::in_memory(split_tokens(tokens, options.val_fraction, options.model.block_size, options.data));
  }
  const TokenView train_tokens = corpus.train(), val_tokens = corpus.val();
  if (writer) ensure_writable_directory(out);
  const std::vector<fs::path> previous = resuming ? std::vector<fs::path>{} : previous_run_files(out, control.force);

  // The model, checked against the machine's memory before anything is allocated.
  const GPTConfig config = options.model_config(tokenizer->size());
  config.validate("model");
  if (resuming) {
    // Compared as configs, not as JSON text: a float may be printed two ways (0.1 or 0.100000001).
    GPTConfig saved;
    update_from_json(saved, state.config, state_file->path() + ": potop.config");
    if (to_json(saved) != to_json(config))
      throw Error(state_file->path() + ": its model config " + state.config.dump() + " does not match " +
                  to_json(config).dump());
  }
  const int B = options.batch_size, T = config.block_size;
  const int replicas = options.parallel == "batch" ? std::min(get_threads(), B) : 1;
  MemoryPlan plan = BatchParallel::plan([&](const BatchShape& s) { return GPT::plan(config, s); }, {B, T}, replicas);
  plan.lines.push_back({"AdamW moments (m, v)", 2.0 * GPT::parameter_layout(config).total_bytes()});
  check_training_fits(plan, replicas);
  GPT model(config);
  if (base) {  // fine-tuning: the base model's weights (the same layout: the same config)
    const Arena& from = base->model->parameters().values();
    std::copy_n(from.data(), from.floats(), model.parameters().values().data());
    base->model.reset();
  } else if (!resuming) {
    model.init_weights(options.seed);
    if (!options.init_embeddings.empty()) start_embeddings(model, *tokenizer, options.init_embeddings, log);
  }
  BatchParallel parallel(model, replicas);
  parallel.reserve({B, T});
  parallel.zero_grad();
  AdamW optimizer(model.parameters().layout(), {options.lr, options.beta1, options.beta2, 1e-8f, options.weight_decay});
  const std::vector<TensorGroup> optimizer_state{{"adamw.m.", &optimizer.m()}, {"adamw.v.", &optimizer.v()}};
  BatchSampler sampler(train_tokens, B, T, hash64(options.seed, 1));
  if (resuming) {
    load_train_state_tensors(*state_file, model.parameters(), optimizer_state);
    optimizer.set_steps_taken(state.adam_steps);
    sampler.set_state(state.sampler);
    state_file.reset();  // the tensors are copied; free the file's bytes
  }

  // Every rank has set up the same run (or the run is refused) before anything is written.
  if (control.ranks) {
    const Arena& weights = model.parameters().values();
    nlohmann::json options_json = to_json(options);
    for (const char* per_rank : {"data", "out", "threads"}) options_json.erase(per_rank);
    const nlohmann::json fingerprint = {
        {"potop_version", POTOP_VERSION}, {"options", options_json}, {"data_hash", hash_hex(data_hash)},
        {"tokenizer_hash", hash_hex(tokenizer->hash())}, {"start_step", resuming ? state.step : 0},
        {"weights_hash", hash_hex(fnv1a64_raw(weights.data(), weights.floats() * sizeof(float)))}};
    const std::string refused = agree_on_setup(comm, "", fingerprint);
    control.ranks->agreed = true;
    if (!refused.empty()) {
      control.ranks->refused = true;
      throw Error(refused);
    }
  }

  if (const PreparedData* data = corpus.prepared_data()) {
    const DataManifest& m = data->manifest();
    std::fprintf(log, "data: %s (prepared): %llu characters in %llu file%s, %s tokenizer, vocabulary %d, train %zu / val %zu tokens\n",
                 options.data.c_str(), static_cast<unsigned long long>(m.characters),
                 static_cast<unsigned long long>(m.documents), m.documents == 1 ? "" : "s", tokenizer->kind().c_str(),
                 tokenizer->size(), train_tokens.size(), val_tokens.size());
  } else {
    std::fprintf(log, "data: %s: %zu characters, %s tokenizer, vocabulary %d, train %zu / val %zu tokens\n",
                 options.data.c_str(), text.size(), tokenizer->kind().c_str(), tokenizer->size(), train_tokens.size(),
                 val_tokens.size());
  }
  text = std::u32string();  // the ids are what training reads
  text_utf8 = std::string();
  if (base) std::fprintf(log, "fine-tuning from %s\n", base->choice.c_str());
  std::fprintf(log, "model: %d layers, %d heads, %d wide, block %d, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_head, config.n_embd, config.block_size, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
  const std::string threading =
      replicas > 1 ? std::to_string(replicas) + " running the model side by side on " +
                         (B % replicas ? "about " : "") + std::to_string(B / replicas) + " rows of the batch each"
                   : "each kernel split over them";
  std::fprintf(log, "threads: %d, %s (--parallel %s), GEMM: %s\n", get_threads(), threading.c_str(),
               options.parallel.c_str(), blas_name());
  if (P > 1)
    std::fprintf(log, "ranks: %d (%s); global batch %d rows (--batch-size %d x --grad-accum %d x %d ranks) of %d "
                 "tokens\n", P, comm.describe().c_str(), B * options.grad_accum * P, B, options.grad_accum, P, T);
  if (options.verbose) print_memory_plan(log, plan);
  else
    std::fprintf(log, "memory: about %s (--verbose shows the plan)\n", format_bytes(static_cast<size_t>(plan.total())).c_str());
  if (unknown.count > 0)
    std::fprintf(log, "note: %s: %s %s (--unknown)\n", options.data.c_str(), unknown.describe().c_str(),
                 options.unknown == Unknown::kSkip ? "left out" : "replaced");
  if (resuming) {
    std::fprintf(log, "resuming %s at step %d of %d\n", out.string().c_str(), state.step, options.steps);
    for (const std::string& c : changes)
      std::fprintf(log, "note: %s\n", c.c_str());
    if (data_hash != state.data_hash) std::fprintf(log, "note: continuing on a different text (--allow-data-change)\n");
    if (state.threads != get_threads())
      std::fprintf(log, "note: the run used %d threads and now uses %d: losses will not be bit-identical to an "
                   "uninterrupted run\n", state.threads, get_threads());
    if (state.ranks != P)
      std::fprintf(log, "note: the run used %d rank%s and now uses %d: the global batch is now %d rows, and the sums "
                   "are rounded in another order\n", state.ranks, state.ranks == 1 ? "" : "s", P,
                   B * options.grad_accum * P);
  } else if (!previous.empty() && writer) {
    for (const fs::path& f : previous) fs::remove(f);
    std::fprintf(log, "note: --force: the model that was in %s is removed; a new run starts\n", out.string().c_str());
  }
  if (writer) save_model_files(out, config, *tokenizer, to_json(options));

  // The job the run harness runs.
  const LRSchedule schedule{options.lr, options.min_lr, options.warmup, options.decay_steps()};
  const uint64_t eval_seed = hash64(options.seed, 2), dropout_seed = hash64(options.seed, 3);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  const ModelHeader header = gpt_header(config, *tokenizer);
  RunJob job;
  job.step = [&](int step) {
    StepSettings s{schedule.at(step), options.grad_clip, options.grad_accum, dropout_seed, step, &comm};
    if (options.mpi_bucket_mb > 0)  // at least one float: a tiny size makes each layer its own bucket
      s.bucket_floats = std::max<size_t>(1, static_cast<size_t>(options.mpi_bucket_mb * 1e6 / sizeof(float)));
    // The step's micro-batches come from one sequence, in turn to each rank: rank r trains on
    // batches r, r + P, r + 2P, … and skips the others, so that P ranks see exactly the batches
    // of one process with P times the --grad-accum, and every rank's sampler stays in step.
    return train_step(parallel, optimizer, s, [&] {
      for (int r = 0; r < P; ++r) {
        if (r == comm.rank()) sampler.next(x.data(), y.data());
        else sampler.skip();
      }
      return Batch{{B, T}, x.data(), y.data()};
    });
  };
  job.evaluate = [&](int, const std::function<bool()>& stop) {
    return evaluate_train_val(parallel, train_tokens, val_tokens, B, T, options.eval_iters, eval_seed, x, y, stop);
  };
  job.save_weights = [&](const fs::path& path, const Metadata& meta) {
    save_weights(path, model.parameters(), header, meta);
  };
  job.save_state = [&](const fs::path& path, TrainState& s) {
    s.adam_steps = optimizer.steps_taken(), s.sampler = sampler.state();
    s.data_hash = data_hash, s.vocab_hash = tokenizer->hash();
    s.options = to_json(options), s.config = to_json(config);
    s.ranks = P;
    save_train_state(path, model.parameters(), header, optimizer_state, s);
  };
  job.stop_requested = [&](int steps_done) {
    const bool mine = control.stop_requested && control.stop_requested(steps_done);
    return P > 1 ? comm.any(mine) : mine;  // every rank stops at the same step
  };
  if (P > 1)
    comm.set_timeout(options.mpi_timeout, "the last checkpoint is in " + out.string() + " (resume with: mpirun -np " +
                                              std::to_string(P) + " potop train --resume " + out.string() + ")");
  RunSettings settings;
  settings.out = out, settings.steps = options.steps, settings.eval_interval = options.eval_interval;
  settings.log_interval = options.log_interval, settings.keep = options.keep;
  settings.skip_nonfinite = options.skip_nonfinite, settings.profile = options.profile;
  settings.tokens_per_step = long(B) * T * options.grad_accum * P;
  settings.writes = writer;
  if (P > 1) settings.command = "mpirun -np " + std::to_string(P) + " potop train";  // how to resume it
  return run_training(settings, job, state, resuming, log);
}

}  // namespace potop
