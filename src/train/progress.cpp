#include "train/progress.h"

#include "core/error.h"

namespace potop {

Progress::Progress(int total_steps, std::FILE* out)
    : total_(total_steps), line_(out), start_(Clock::now()), window_start_(start_) {}

double Progress::elapsed_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void Progress::update(int step, float loss, float lr, long tokens) {
  window_tokens_ += tokens;
  ++window_steps_;
  const auto now = Clock::now();
  const double window = std::chrono::duration<double>(now - window_start_).count();
  // Refresh the rate twice a second; a terminal sees every step, a log file a line every 5 s.
  if (window < (line_.tty() ? 0.5 : 5.0) && step != total_) {
    if (!line_.tty()) return;
  } else {
    tokens_per_s_ = window_tokens_ / window;
    seconds_per_step_ = window / window_steps_;
    window_start_ = now, window_tokens_ = 0, window_steps_ = 0;
  }
  const double eta = seconds_per_step_ * (total_ - step);
  char text[160];
  std::snprintf(text, sizeof text, "step %d/%d | loss %.4f | lr %.2e | %.0f tok/s | ETA %s", step, total_, loss, lr,
                tokens_per_s_, format_duration(eta).c_str());
  line_.show(text);
}

void Progress::finish_line() { line_.finish(); }

MetricsLog::MetricsLog(const std::string& path) : path_(path), out_(path, std::ios::app) {
  if (!out_) throw Error(path + ": cannot open the metrics log for writing");
}

void MetricsLog::write(const nlohmann::json& record) {
  out_ << record.dump() << '\n';
  out_.flush();
  if (!out_) throw Error(path_ + ": cannot write the metrics log (disk full?)");
}

}  // namespace potop
