// The live progress line and the metrics log.
#pragma once
#include "core/progress_line.h"
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace potop {

// "step 120/2000 | loss 2.3456 | lr 1.00e-03 | 21345 tok/s | ETA 1m32s" (core/progress_line.h).
class Progress {
 public:
  Progress(int total_steps, std::FILE* out = stderr);
  // Called after each step with the tokens it processed.
  void update(int step, float loss, float lr, long tokens);
  // Ends the in-place line so the next message starts on its own line.
  void finish_line();
  double tokens_per_second() const { return tokens_per_s_; }
  double elapsed_seconds() const;

  static std::string format_duration(double seconds) { return ProgressLine::format_duration(seconds); }

 private:
  using Clock = std::chrono::steady_clock;
  int total_;
  ProgressLine line_;
  Clock::time_point start_, window_start_;
  long window_tokens_ = 0;
  int window_steps_ = 0;
  double tokens_per_s_ = 0, seconds_per_step_ = 0;
};

// Appends one JSON object per line to a file, flushed at once so a crash loses nothing.
class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path);
  void write(const nlohmann::json& record);

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace potop
