#include "train/run_kit.h"

#include <system_error>

#include "checkpoint/model_dir.h"
#include "checkpoint/weights.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "core/profile.h"
#include "core/threads.h"
#include "kernels/gemm.h"
#include "nn/model_kind.h"
#include "train/resume.h"

namespace potop {

RunKit::RunKit(const RunControl& control, std::string kind, std::string command, std::FILE* log)
    : control_(control), kind_(std::move(kind)), command_(std::move(command)), log_(log) {
  if (control.allow_data_change && control.resume.empty())
    throw Error("--allow-data-change only applies with --resume");
  if (control.force && !control.resume.empty()) throw Error("--force starts a new run; it does not go with --resume");
}

RunKit::~RunKit() = default;

void RunKit::refuse_on_resume(std::initializer_list<FreshOnly> fresh_only, const std::string& kept) const {
  if (!resuming()) return;
  for (const FreshOnly& option : fresh_only)
    if (option.given) throw Error(std::string(option.flag) + " starts a new run; a resumed run keeps its " + kept);
}

void RunKit::open_state() {
  if (state_file_) return;
  state_file_.emplace(resolve_resume_path(control_.resume, out_, command_));
  state_ = read_train_state(*state_file_);
  const std::string kind = read_model_kind(*state_file_);
  if (!kind.empty() && kind != kind_) {
    // Which command resumes it, from the table of kinds (a kind this potop lacks: its name).
    const ModelKind* theirs = nullptr;
    for (const ModelKind* k : model_kinds())
      if (k->name == kind) theirs = k;
    const std::string what = theirs ? theirs->noun + " (kind '" + kind + "')" : "a '" + kind + "' model";
    throw Error(control_.resume + ": the training run of " + what + ", not of " + model_kind(kind_).noun + ", which " +
                command_ + " trains" + (theirs ? "; resume it with " + theirs->trainer + " --resume " + control_.resume : ""));
  }
  // The same kind from another trainer (translate train's run and translate pretrain's): its
  // options are not this command's.
  if (!state_.trainer.empty() && state_.trainer != command_)
    throw Error(control_.resume + ": the training run of " + state_.trainer + ", not of " + command_ +
                "; resume it with " + state_.trainer + " --resume " + control_.resume);
}

// A state written before it named its trainer: an option this trainer does not have is another
// trainer's of the same kind (translate train's bad_lines in a pre-training run), said as such
// rather than as an unknown option.
void RunKit::refuse_others_options(const std::vector<Field>& fields) const {
  if (!state_.trainer.empty() || !state_.options.is_object()) return;
  for (const auto& item : state_.options.items()) {
    const std::string& key = item.key();
    if (std::none_of(fields.begin(), fields.end(), [&](const Field& f) { return f.json_key() == key; }))
      throw Error(control_.resume + ": its training options hold '" + key + "', which " + command_ + " does not take: " +
                  "another command trained this " + model_kind(kind_).name + " model; resume it with that one");
  }
}

std::string RunKit::state_path() const { return state_file_ ? state_file_->path() : control_.resume; }

namespace {

// The absolute, normal form of a path, without a trailing slash ("runs/x/" is "runs/x").
fs::path absolute_form(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p.has_filename() ? p : p.parent_path();
}

// Names of files, for a message: "a, b and c".
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

}  // namespace

void RunKit::refuse_init_from_out(const std::string& init_from) const {
  if (init_from.empty()) return;
  const fs::path from = absolute_form(init_from), out = absolute_form(out_);
  if (from == out || from.parent_path() == out)  // the directory, or a weights file in it
    throw Error("--init-from " + init_from + ": is in --out " + out_.string() +
                ", which this run writes: it would replace the model it starts from; choose another --out");
}

void RunKit::refuse_users_files(const std::vector<std::string>& own_files) const {
  std::vector<std::string> users;
  std::error_code ec;
  for (const std::string& name : own_files)
    if (fs::exists(out_ / name, ec)) users.push_back(name);
  if (!users.empty())
    throw Error("--out " + out_.string() + " holds " + listed(users) + " but no run of " + command_ + ", which writes " +
                (users.size() == 1 ? "that file" : "those files") + "; potop does not replace files it did not "
                "write: move " + (users.size() == 1 ? "it" : "them") + ", or choose another --out");
}

void RunKit::start(const RunOptions& options, const std::vector<std::string>& own_files, const std::string& init_from) {
  options_ = options;
  apply_threads_flag(options.threads);
  if (control_.ranks) {
    comm_ = control_.ranks->comm;
  } else {
    single_ = std::make_unique<SingleProcess>();
    comm_ = single_.get();
  }
  // Ranks on one machine share its cores unless --threads says otherwise.
  if (ranks() > 1 && options.threads == 0) set_threads(std::max(1, hardware_threads() / comm_->local_size()));
  profile::enable(options.profile);
  out_ = options.out;
  if (resuming()) return;

  refuse_init_from_out(init_from);  // before --force is suggested for the model in --out
  previous_ = previous_run_files(out_, control_.force);
  if (previous_.empty()) return refuse_users_files(own_files);  // no earlier run wrote them
  std::error_code ec;
  for (const std::string& name : own_files)
    if (fs::exists(out_ / name, ec)) previous_.push_back(out_ / name);
}

std::unique_ptr<Tokenizer> RunKit::resumed_tokenizer() const {
  std::unique_ptr<Tokenizer> tokenizer = load_tokenizer_dir(out_);
  if (tokenizer->hash() != state_.vocab_hash)
    throw Error(tokenizer_file_in(out_, tokenizer->kind()).string() + ": does not match the vocabulary of " +
                state_path() + " (hash " + hash_hex(tokenizer->hash()) + " vs " + hash_hex(state_.vocab_hash) + ")");
  return tokenizer;
}

void RunKit::check_data(uint64_t data_hash, const std::string& data, const std::string& what) const {
  if (!resuming() || data_hash == state_.data_hash || control_.allow_data_change) return;
  throw Error("--data " + data + ": differs from the " + what + " the run in " + out_.string() +
              " was trained on (hash " + hash_hex(data_hash) + ", the checkpoint has " + hash_hex(state_.data_hash) +
              " from " + state_.options.value("data", std::string("?")) + "); pass --allow-data-change to continue on this " +
              what);
}

void RunKit::compare_configs(nlohmann::json saved, nlohmann::json now, const std::vector<std::string>& free) const {
  const std::string saved_text = saved.dump();
  for (const std::string& key : free) saved.erase(key), now.erase(key);
  // Compared as configs, not as JSON text: a float may be printed two ways (0.1 or 0.100000001).
  if (saved != now)
    throw Error(state_path() + ": its model config " + saved_text + " does not match " + now.dump() +
                "; a resumed run keeps the model's shape");
}

int RunKit::replicas(int rows) const { return options_.parallel == "batch" ? std::max(1, std::min(get_threads(), rows)) : 1; }

void RunKit::adopt(std::unique_ptr<Model> model, const MemoryPlan& plan, int replicas, const BatchShape& largest) {
  plan_ = plan, largest_ = largest;
  // Created once the data is read and the model fits: a refused run leaves no directory behind.
  // One writer per directory, before anything in it changes (--force's removal included).
  if (writer()) ensure_writable_directory(out_), lock_.emplace(out_, command_);
  model_ = std::move(model);
  parallel_.emplace(*model_, replicas);
  parallel_->zero_grad();
  optimizer_.emplace(model_->parameters().layout(),
                     AdamWHyper{options_.lr, options_.beta1, options_.beta2, options_.eps, options_.weight_decay});
  optimizer_state_ = {{"adamw.m.", &optimizer_->m()}, {"adamw.v.", &optimizer_->v()}};
  if (!resuming()) return;
  load_train_state_tensors(*state_file_, model_->parameters(), optimizer_state_);
  optimizer_->set_steps_taken(state_.adam_steps);
  state_file_.reset();  // the tensors are copied; free the file's bytes
}

void RunKit::agree(const nlohmann::json& options, uint64_t data_hash, const Tokenizer& tokenizer) {
  // Every rank has set up the same run (or the run is refused) before anything is written.
  const Arena& weights = model_->parameters().values();
  nlohmann::json same = options;
  for (const char* per_rank : {"data", "out", "threads"}) same.erase(per_rank);
  const nlohmann::json fingerprint = {
      {"potop_version", POTOP_VERSION}, {"command", command_}, {"options", same},
      {"data_hash", hash_hex(data_hash)}, {"tokenizer_hash", hash_hex(tokenizer.hash())},
      {"start_step", resuming() ? state_.step : 0},
      {"weights_hash", hash_hex(fnv1a64_raw(weights.data(), weights.floats() * sizeof(float)))}};
  const std::string refused = agree_on_setup(*comm_, "", fingerprint);
  control_.ranks->agreed = true;
  if (!refused.empty()) {
    control_.ranks->refused = true;
    throw Error(refused);
  }
}

RunResult RunKit::run(const ModelJob& job, const Tokenizer& tokenizer, const nlohmann::json& config,
                      const nlohmann::json& options, uint64_t data_hash) {
  POTOP_CHECK(model_, "RunKit::run before build");
  if (control_.ranks) agree(options, data_hash, tokenizer);
  const int P = ranks(), M = options_.grad_accum, B = largest_.B;
  std::FILE* log = log_;
  const int shards = parallel_->max_replicas();
  // What the threads do, in the words of --parallel: one thread has nothing to split.
  const int threads = get_threads();
  std::string threading;
  if (shards > 1)
    threading = ", " + std::to_string(shards) + " running the model side by side on " + (B % shards ? "about " : "") +
                std::to_string(B / shards) + " rows of the batch each (--parallel batch)";
  else if (threads > 1)
    threading = std::string(", each kernel split over them") +
                (options_.parallel == "kernel" ? " (--parallel kernel)" : B == 1 ? " (a batch of one row)" : "");
  std::fprintf(log, "threads: %d%s, GEMM: %s\n", threads, threading.c_str(), blas_name());
  // Legal, but rarely what was meant: the rate climbs for the whole run (a short run keeps the
  // default --warmup 100). Said once the run is set up, not before an error about its input.
  if (!resuming() && options_.warmup > 0 && options_.warmup >= options_.decay_steps())
    std::fprintf(log, "note: --warmup %d is as long as the run (%d steps): the learning rate never reaches its peak "
                 "(--lr %g); give a shorter --warmup\n", options_.warmup, options_.decay_steps(), options_.lr);
  if (P > 1) {
    const std::string batch = job.batch_text.empty() ? std::to_string(B * M * P) + " rows (--batch-size " +
                                                           std::to_string(B) + " x --grad-accum " + std::to_string(M) +
                                                           " x " + std::to_string(P) + " ranks) of " +
                                                           std::to_string(largest_.T) + " tokens"
                                                     : std::to_string(M * P) + " micro-batches (--grad-accum " +
                                                           std::to_string(M) + " x " + std::to_string(P) +
                                                           " ranks) of " + job.batch_text;
    std::fprintf(log, "ranks: %d (%s); global batch %s\n", P, comm_->describe().c_str(), batch.c_str());
  }
  if (options_.verbose) print_memory_plan(log, plan_);
  else std::fprintf(log, "memory: about %s (--verbose shows the plan)\n", format_bytes(size_t(plan_.total())).c_str());
  if (resuming()) {
    std::fprintf(log, "resuming %s at step %d of %d\n", out_.string().c_str(), state_.step, options_.steps);
    for (const std::string& n : notes_) std::fprintf(log, "note: %s\n", n.c_str());
    if (data_hash != state_.data_hash) std::fprintf(log, "note: continuing on different data (--allow-data-change)\n");
    if (state_.threads != get_threads())
      std::fprintf(log, "note: the run used %d threads and now uses %d: losses will not be bit-identical to an "
                   "uninterrupted run\n", state_.threads, get_threads());
    if (state_.ranks != P)
      std::fprintf(log, "note: the run used %d rank%s and now uses %d: the global batch is now %d %s, and the sums are "
                   "rounded in another order\n", state_.ranks, state_.ranks == 1 ? "" : "s", P,
                   job.batch_text.empty() ? B * M * P : M * P, job.batch_text.empty() ? "rows" : "micro-batches");
  } else if (!previous_.empty() && writer()) {
    for (const fs::path& f : previous_) fs::remove(f);
    std::fprintf(log, "note: --force: the model that was in %s is removed; a new run starts\n", out_.string().c_str());
  }
  if (writer()) job.write_model_files(options);

  const LRSchedule schedule = options_.schedule(job.d_model);
  const uint64_t dropout_seed = hash64(options_.seed, 3);
  const ModelHeader header{kind_, config, &tokenizer};
  Communicator& comm = *comm_;
  RunJob steps;
  steps.step = [&](int step) {
    StepSettings s{schedule.at(step), options_.grad_clip, M, dropout_seed, step, &comm};
    if (options_.mpi_bucket_mb > 0)  // at least one float: a tiny size makes each layer its own bucket
      s.bucket_floats = std::max<size_t>(1, static_cast<size_t>(options_.mpi_bucket_mb * 1e6 / sizeof(float)));
    // The step's micro-batches are dealt in turn to the ranks: rank r trains on micro-batches
    // r, r + P, r + 2P, … of the step and skips the others, so that P ranks see exactly the
    // batches of one process with P times the --grad-accum.
    long next = long(step) * M * P;
    return train_step(*parallel_, *optimizer_, s, [&] {
      Batch mine;
      for (int r = 0; r < P; ++r, ++next) {
        if (r == comm.rank()) mine = job.next_batch(next);
        else if (job.skip_batch) job.skip_batch();
      }
      return mine;
    });
  };
  steps.evaluate = job.evaluate;
  steps.save_weights = [&](const fs::path& path, const Metadata& meta) {
    save_weights(path, model_->parameters(), header, meta);
  };
  steps.save_state = [&](const fs::path& path, TrainState& s) {
    s.adam_steps = optimizer_->steps_taken(), s.sampler = job.sampler_state();
    s.data_hash = data_hash, s.vocab_hash = tokenizer.hash();
    s.options = options, s.config = config, s.ranks = P, s.trainer = command_;
    save_train_state(path, model_->parameters(), header, optimizer_state_, s);
  };
  steps.stop_requested = [&](int steps_done) {
    const bool mine = control_.stop_requested && control_.stop_requested(steps_done);
    return P > 1 ? comm.any(mine) : mine;  // every rank stops at the same step
  };
  const std::string command = P > 1 ? "mpirun -np " + std::to_string(P) + " " + command_ : command_;
  if (P > 1)
    comm.set_timeout(options_.mpi_timeout,
                     "the last checkpoint is in " + out_.string() + " (resume with: " + command + " --resume " +
                         out_.string() + ")");
  RunSettings settings;
  settings.out = out_, settings.steps = options_.steps, settings.eval_interval = options_.eval_interval;
  settings.log_interval = options_.log_interval, settings.keep = options_.keep, settings.patience = job.patience;
  settings.skip_nonfinite = options_.skip_nonfinite, settings.profile = options_.profile;
  settings.tokens_per_step = std::max(1L, job.tokens_per_batch) * M * P;
  settings.writes = writer();
  settings.command = command;
  return run_training(settings, steps, state_, resuming(), log);
}

}  // namespace potop
