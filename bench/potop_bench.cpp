// potop's side of the benchmark (bench/run.py drives it; see docs/performance.md). One
// measurement per process, so the peak RSS it reports is that measurement's own:
//
//   potop_bench train    --n-layer 4 --n-head 4 --n-embd 128 --block 64 --batch 12 --threads 2 [--parallel kernel]
//   potop_bench generate --n-layer 6 --n-head 6 --n-embd 384 --block 512 --new-tokens 500 [--no-kv-cache]
//   potop_bench gemm     --n-layer 4 --n-head 4 --n-embd 128 --block 64 --batch 12 --threads 2
//                        (what BLAS does on the model's GEMM shapes: gemm_ceiling.cpp)
//   potop_bench peak     --threads 2 [--isa avx2]  (the FMA peak with the widest FMA, or the one named: fma_peak.cpp)
//   potop_bench bandwidth --threads 2  (memory read bandwidth, the bound of batch-1 decoding: bandwidth.cpp)
//
// train --profile also prints the per-kernel time table (core/profile.h) on stderr.
//
// Each prints one JSON object on stdout. Training steps are the trainer's own train_step
// (train/train_step.h: zero_grad, forward, backward, clip the gradient norm to 1, AdamW). Tokens
// come from --tokens (an int32 file that run.py writes from the corpus) or are uniform random ids.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/profile.h"
#include "bandwidth.h"
#include "fma_peak.h"
#include "gemm_ceiling.h"
#include "core/rng.h"
#include "core/threads.h"
#include "generate/generator.h"
#include "kernels/gemm.h"
#include "models/gpt/gpt.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/train_step.h"

namespace potop::bench {

namespace {

struct Args {
  std::string mode;
  int n_layer = 4, n_head = 4, n_embd = 128, block = 64, batch = 12, vocab = 96;
  int threads = 1, steps = 10, warmup = 3, new_tokens = 500;
  bool kv_cache = true, profile = false;
  double seconds = 1.0;
  std::string tokens;
  std::string isa;  // peak: measure this ISA instead of the widest (avx512, avx2, sse)
  std::string parallel = "batch";  // train: batch (BatchParallel replicas) or kernel
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) {
    std::fprintf(stderr, "usage: potop_bench train|generate|gemm|peak|bandwidth [--flag value]...\n");
    std::exit(2);
  }
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--no-kv-cache" || f == "--profile") {
      (f == "--profile" ? a.profile : a.kv_cache) = f == "--profile";
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "potop_bench: %s needs a value\n", f.c_str());
      std::exit(2);
    }
    const char* v = argv[++i];
    if (f == "--n-layer") a.n_layer = std::atoi(v);
    else if (f == "--n-head") a.n_head = std::atoi(v);
    else if (f == "--n-embd") a.n_embd = std::atoi(v);
    else if (f == "--block") a.block = std::atoi(v);
    else if (f == "--batch") a.batch = std::atoi(v);
    else if (f == "--vocab") a.vocab = std::atoi(v);
    else if (f == "--threads") a.threads = std::atoi(v);
    else if (f == "--steps") a.steps = std::atoi(v);
    else if (f == "--warmup") a.warmup = std::atoi(v);
    else if (f == "--new-tokens") a.new_tokens = std::atoi(v);
    else if (f == "--seconds") a.seconds = std::atof(v);
    else if (f == "--tokens") a.tokens = v;
    else if (f == "--isa") a.isa = v;
    else if (f == "--parallel") a.parallel = v;
    else {
      std::fprintf(stderr, "potop_bench: unknown flag %s\n", f.c_str());
      std::exit(2);
    }
  }
  return a;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

// Page faults so far: a step that maps fresh memory (a large allocation freed and made again)
// faults every time, so faults per timed step count the allocations that steady state should not have.
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// The token stream: the int32 file, or random ids below vocab.
std::vector<int> load_tokens(const Args& a, int& vocab) {
  std::vector<int> tokens;
  if (!a.tokens.empty()) {
    std::ifstream f(a.tokens, std::ios::binary);
    f.seekg(0, std::ios::end);
    tokens.resize(static_cast<size_t>(f.tellg()) / sizeof(int));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * sizeof(int)));
    vocab = *std::max_element(tokens.begin(), tokens.end()) + 1;
  } else {
    Rng rng(7);
    tokens.resize(1 << 20);
    for (int& t : tokens) t = static_cast<int>(rng.below(vocab));
  }
  return tokens;
}

GPTConfig model_config(const Args& a, int vocab) {
  GPTConfig c;
  c.vocab_size = vocab;
  c.block_size = a.block, c.n_layer = a.n_layer, c.n_head = a.n_head, c.n_embd = a.n_embd;
  return c;
}

// Model FLOPs per trained token: 6 N (forward 2 N, backward 4 N; N counts the tied LM head
// but not the position table, which is a lookup) + 12 L T C for attention (the full square,
// the usual convention, though causal attention needs only half of it).
double flops_per_token(const GPT& model) {
  const GPTConfig& c = model.config();
  const double n = static_cast<double>(model.num_parameters()) - double(c.block_size) * c.n_embd;
  return 6.0 * n + 12.0 * c.n_layer * c.block_size * c.n_embd;
}

void print_common(const Args& a, const GPT& model) {
  std::printf("\"impl\": \"potop\", \"gemm\": \"%s\", \"threads\": %d, \"parallel\": \"%s\", \"params\": %zu, ",
              blas_name(), a.threads, a.parallel.c_str(), model.num_parameters());
}

int train(const Args& a) {
  int vocab = a.vocab;
  const std::vector<int> tokens = load_tokens(a, vocab);
  GPT model(model_config(a, vocab));
  model.init_weights(1337);
  const int B = a.batch, T = a.block;
  BatchParallel parallel(model, a.parallel == "batch" ? std::min(a.threads, B) : 1);
  parallel.reserve({B, T});
  parallel.zero_grad();
  AdamW optimizer(model.parameters().layout(), {});
  Rng rng(42);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  std::vector<double> times;
  float loss = 0;
  long faults = 0;
  for (int step = 0; step < a.warmup + a.steps; ++step) {
    if (step == a.warmup) faults = minor_faults();
    for (int b = 0; b < B; ++b) {  // random windows, as BatchSampler
      const size_t s = rng.below(tokens.size() - T - 1);
      std::copy_n(tokens.begin() + s, T, x.begin() + size_t(b) * T);
      std::copy_n(tokens.begin() + s + 1, T, y.begin() + size_t(b) * T);
    }
    profile::enable(a.profile && step >= a.warmup);
    const double t0 = now();
    const StepSettings settings{/*lr=*/1e-3f, /*grad_clip=*/1.0f, /*micro_batches=*/1, /*dropout_seed=*/42, step};
    loss = train_step(parallel, optimizer, settings, [&] { return Batch{{B, T}, x.data(), y.data()}; }).loss;
    if (step >= a.warmup) times.push_back(now() - t0);
  }
  faults = minor_faults() - faults;
  if (a.profile) profile::print(stderr);
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("{");
  print_common(a, model);
  std::printf("\"ms_per_step\": %.3f, \"min_ms_per_step\": %.3f, \"tokens_per_s\": %.1f, \"flops_per_token\": %.6g, "
              "\"loss\": %.4f, \"peak_rss_mib\": %.1f, \"page_faults_per_step\": %.1f}\n",
              median * 1e3, times.front() * 1e3, B * T / median, flops_per_token(model), loss, peak_rss_mib(),
              double(faults) / a.steps);
  return 0;
}

int generate(const Args& a) {
  int vocab = a.vocab;
  const std::vector<int> tokens = load_tokens(a, vocab);
  GPT model(model_config(a, vocab));
  model.init_weights(1337);
  const std::vector<int> prompt(tokens.begin(), tokens.begin() + 1);
  SamplingOptions sampling;
  sampling.temperature = 1.0f;
  const int n = std::min(a.new_tokens, a.block - 1);  // never past block: no cache rebuild
  // One short warm-up run, then the timed one.
  double t0 = 0, t1 = 0;
  for (int run = 0; run < 2; ++run) {
    const int count = run == 0 ? 8 : n;
    profile::enable(a.profile && run == 1);
    t0 = now();
    if (a.kv_cache) {
      generate(model, prompt, count, sampling, 99);
    } else {  // every new token re-reads the whole context
      Sampler sampler(sampling, 99);
      std::vector<int> context = prompt;
      for (int i = 0; i < count; ++i) {
        const int T = static_cast<int>(context.size());
        model.forward(Batch{{1, T}, context.data(), nullptr}, Pass{});
        context.push_back(sampler.sample(model.logits() + size_t(T - 1) * vocab, vocab));
      }
    }
    t1 = now();
  }
  if (a.profile) profile::print(stderr);
  std::printf("{");
  print_common(a, model);
  // Bytes a token reads at least: every weight once (of the position table, one row), and with a
  // cache the keys and values of every earlier position, on average over the n tokens.
  const GPTConfig& c = model.config();
  const double weight_bytes = 4.0 * (double(model.num_parameters()) - double(c.block_size - 1) * c.n_embd);
  const double cache_bytes = a.kv_cache ? 4.0 * 2 * c.n_layer * c.n_embd * (n + 1) / 2.0 : 0.0;
  std::printf("\"kv_cache\": %s, \"new_tokens\": %d, \"seconds\": %.4f, \"tokens_per_s\": %.1f, \"peak_rss_mib\": %.1f, "
              "\"weight_bytes\": %.0f, \"cache_bytes_per_token\": %.0f}\n",
              a.kv_cache ? "true" : "false", n, t1 - t0, n / (t1 - t0), peak_rss_mib(), weight_bytes, cache_bytes);
  return 0;
}

}  // namespace
}  // namespace potop::bench

int main(int argc, char** argv) {
  potop::bound_openmp_spinning(argv);  // as potop itself runs (core/threads.h)
  using namespace potop::bench;
  const Args a = parse(argc, argv);
  potop::set_threads(a.threads);
  if (a.mode == "train") return train(a);
  if (a.mode == "generate") return generate(a);
  if (a.mode == "gemm") {  // the GEMM ceiling of a training step, rows split as BatchParallel does
    int vocab = a.vocab;
    load_tokens(a, vocab);
    const int replicas = a.parallel == "batch" ? std::min(a.threads, a.batch) : 1;
    const int rows = (a.batch + replicas - 1) / replicas * a.block;
    std::printf("{\"impl\": \"gemm-ceiling\", \"gemm\": \"%s\", \"threads\": %d, \"rows\": %d, \"gflops\": %.2f}\n",
                potop::blas_name(), a.threads, rows, gemm_ceiling_gflops(model_config(a, vocab), rows, replicas, a.seconds));
    return 0;
  }
  if (a.mode == "peak") {
    FmaPeak p;
    try {
      p = measure_fma_peak(a.threads, a.seconds, a.isa);
    } catch (const std::runtime_error& e) {
      std::fprintf(stderr, "potop_bench peak: %s\n", e.what());
      return 2;
    }
    std::printf("{\"impl\": \"fma-peak\", \"threads\": %d, \"gflops\": %.2f, \"isa\": \"%s\", \"lanes\": %d, "
                "\"ghz\": %.3f, \"flops_per_cycle\": %.1f}\n",
                a.threads, p.gflops, p.isa, p.lanes, p.ghz, p.flops_per_cycle);
    return 0;
  }
  if (a.mode == "bandwidth") {
    std::printf("{\"impl\": \"read-bandwidth\", \"threads\": %d, \"gbs\": %.2f}\n", a.threads,
                measure_read_bandwidth_gbs(a.threads, std::size_t(1) << 29, a.seconds));
    return 0;
  }
  std::fprintf(stderr, "potop_bench: unknown mode %s\n", a.mode.c_str());
  return 2;
}
