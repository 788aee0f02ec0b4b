#include "serve/metrics.h"

#include <malloc.h>

#include <cstdio>

namespace potop::serve {

namespace {

constexpr std::chrono::seconds kWindow{10};

void line(std::string& out, const char* name, const char* type, const char* help, double value) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "# HELP %s %s\n# TYPE %s %s\n%s %.10g\n", name, help, name, type, name, value);
  out += buf;
}

}  // namespace

void Metrics::request(const std::string& path, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{path, status}];
}

void Metrics::generation(long prompt_tokens, long generated_tokens, double seconds, bool cancelled, bool timed_out) {
  std::lock_guard lock(mutex_);
  prompt_tokens_ += prompt_tokens;
  generated_tokens_ += generated_tokens;
  generation_seconds_ += seconds;
  ++generations_;
  cancelled_ += cancelled;
  timed_out_ += timed_out;
  const auto now = std::chrono::steady_clock::now();
  recent_.emplace_back(now, generated_tokens);
  prune(now);  // also here, or a server nobody scrapes would keep every generation
}

void Metrics::prune(std::chrono::steady_clock::time_point now) {
  while (!recent_.empty() && now - recent_.front().first > kWindow) recent_.pop_front();
}

std::string Metrics::prometheus(int waiting, int busy, int slots) {
  std::lock_guard lock(mutex_);
  prune(std::chrono::steady_clock::now());
  long recent_tokens = 0;
  for (const auto& [when, tokens] : recent_) recent_tokens += tokens;

  std::string out = "# HELP potop_requests_total HTTP requests answered, by path and status code\n"
                    "# TYPE potop_requests_total counter\n";
  char buf[512];
  for (const auto& [key, count] : requests_) {
    std::snprintf(buf, sizeof buf, "potop_requests_total{path=\"%s\",code=\"%d\"} %ld\n", key.first.c_str(),
                  key.second, count);
    out += buf;
  }
  line(out, "potop_prompt_tokens_total", "counter", "prompt tokens read", prompt_tokens_);
  line(out, "potop_generated_tokens_total", "counter", "tokens generated", generated_tokens_);
  line(out, "potop_generations_total", "counter", "generations run (finished, cancelled or timed out)", generations_);
  line(out, "potop_generations_cancelled_total", "counter", "generations stopped because the client disconnected",
       cancelled_);
  line(out, "potop_generations_timed_out_total", "counter", "generations stopped by the per-request time limit",
       timed_out_);
  line(out, "potop_generation_seconds_total", "counter", "seconds spent generating, summed over slots",
       generation_seconds_);
  line(out, "potop_tokens_per_second", "gauge", "tokens generated per second over the last 10 seconds",
       static_cast<double>(recent_tokens) / static_cast<double>(kWindow.count()));
  line(out, "potop_queue_length", "gauge", "requests waiting for a free slot", waiting);
  line(out, "potop_slots_busy", "gauge", "slots generating now", busy);
  line(out, "potop_slots", "gauge", "slots (generations that can run at once)", slots);
  // What the program holds, as against its resident size: the two part when the allocator keeps
  // freed memory (fragmentation), and grow together when something leaks.
  const struct mallinfo2 heap = mallinfo2();
  line(out, "potop_heap_in_use_bytes", "gauge", "bytes allocated and not yet freed (glibc mallinfo2)",
       static_cast<double>(heap.uordblks + heap.hblkhd));
  return out;
}

}  // namespace potop::serve
