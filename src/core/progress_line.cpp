#include "core/progress_line.h"

#include <unistd.h>

namespace potop {

ProgressLine::ProgressLine(std::FILE* out) : out_(out), tty_(isatty(fileno(out))), last_(Clock::now()) {}

bool ProgressLine::due(double tty_seconds, double log_seconds) const {
  return std::chrono::duration<double>(Clock::now() - last_).count() >= (tty_ ? tty_seconds : log_seconds);
}

void ProgressLine::show(const std::string& text) {
  // \033[K clears what a longer previous line left at the end.
  std::fprintf(out_, "%s%s%s", tty_ ? "\r\033[K" : "", text.c_str(), tty_ ? "" : "\n");
  std::fflush(out_);
  open_ = tty_;
  last_ = Clock::now();
}

void ProgressLine::finish() {
  if (open_) std::fputc('\n', out_);
  open_ = false;
}

std::string ProgressLine::format_duration(double s) {
  char buf[32];
  const long t = static_cast<long>(s + 0.5);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

}  // namespace potop
