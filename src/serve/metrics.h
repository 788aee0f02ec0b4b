// Counters for GET /metrics, in Prometheus' text format: requests by path and status, tokens,
// generations finished, cancelled (the client left) and timed out, the queue, and the generated
// tokens per second over the last 10 seconds.
#pragma once
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace potop::serve {

class Metrics {
 public:
  // `path` is a label from a fixed set (the server's route_label), so that a scanner cannot grow
  // the table of counters without bound.
  void request(const std::string& path, int status);
  void generation(long prompt_tokens, long generated_tokens, double seconds, bool cancelled, bool timed_out);
  // gauges: requests waiting for a slot, slots generating, slots in all
  std::string prometheus(int waiting, int busy, int slots);

 private:
  void prune(std::chrono::steady_clock::time_point now);  // drops what is older than the window; mutex_ held

  std::mutex mutex_;
  std::map<std::pair<std::string, int>, long> requests_;
  long prompt_tokens_ = 0, generated_tokens_ = 0, generations_ = 0, cancelled_ = 0, timed_out_ = 0;
  double generation_seconds_ = 0;
  std::deque<std::pair<std::chrono::steady_clock::time_point, long>> recent_;  // (end, tokens) of the last 10 s
};

}  // namespace potop::serve
