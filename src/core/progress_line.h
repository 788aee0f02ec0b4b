// The one live progress line every long command prints (train's steps, prepare's bytes,
// word2vec's words): on a terminal it rewrites itself in place; otherwise (a log file, CI) each
// update is a line of its own, so a log stays readable. Commands only say what the line holds
// and how often.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace potop {

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out = stderr);

  bool tty() const { return tty_; }
  // Whether an update is due: at least `tty_seconds` (on a terminal) or `log_seconds` (in a log)
  // after the last one shown. A caller that shows the line at its own pace need not ask.
  bool due(double tty_seconds, double log_seconds) const;
  // Shows `text` as the line.
  void show(const std::string& text);
  // Ends a line left open on a terminal, so that the next message starts on its own line.
  void finish();

  // "1h02m", "3m05s", "42s"
  static std::string format_duration(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  bool tty_;
  bool open_ = false;
  Clock::time_point last_;
};

}  // namespace potop
