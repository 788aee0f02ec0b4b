// What the renderings of a process share: potop serve gives every chat's rendering the same
// budget, so that many requests rendering a hostile template at once take no more than one does
// (each stops at kMaxBuilt bytes and 2 s of its own, generate/jinja/value.h, template.h):
//   - their turn (begin/end, taken by the caller around Template::render): one renders at a time,
//     waiting at most `wait` for its turn, which comes no sooner after a rendering ended than that
//     rendering took, so that together they use at most half of one core however many hostile
//     requests arrive; and a client (an address) has one rendering waiting or running at a time,
//     so that one sending many cannot keep another's from its turn. Chat templates render in
//     well under a millisecond: the turn costs them nothing;
//   - memory: a rendering takes bytes from the budget as it builds (a MiB at a time) and gives
//     them back when it ends;
//   - stop(): the renderings waiting give up, and the one running stops at its next check
//     (TemplateError kBusy), so that a server stopping waits for no template.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>

namespace potop::jinja {

class RenderBudget {
 public:
  RenderBudget(size_t bytes, std::chrono::milliseconds wait) : limit_(bytes), wait_(wait) {}
  RenderBudget(const RenderBudget&) = delete;
  RenderBudget& operator=(const RenderBudget&) = delete;

  enum class Turn { kGot, kWaitedTooLong, kStopped, kClientHasOne };
  // The turn to render for `client` ("" : no client of its own); end() gives it back after kGot.
  Turn begin(const std::string& client) {
    const auto until = Clock::now() + wait_;
    std::unique_lock lock(mutex_);
    if (!client.empty() && !clients_.insert(client).second) return Turn::kClientHasOne;
    for (;;) {
      Turn refused = stopped_ ? Turn::kStopped : Turn::kGot;
      const auto now = Clock::now();
      if (refused == Turn::kGot && !rendering_ && now >= next_) break;
      if (refused == Turn::kGot && now >= until) refused = Turn::kWaitedTooLong;
      if (refused != Turn::kGot) {
        if (!client.empty()) clients_.erase(client);
        return refused;
      }
      // Woken by end() or stop(), or when the pause after the last rendering is over.
      free_.wait_until(lock, rendering_ ? until : std::min(until, next_));
    }
    rendering_ = true;
    client_ = client;
    started_ = Clock::now();
    return Turn::kGot;
  }
  void end() {
    {
      std::lock_guard lock(mutex_);
      rendering_ = false;
      if (!client_.empty()) clients_.erase(client_);
      const auto now = Clock::now();
      next_ = now + (now - started_);
    }
    free_.notify_all();
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    free_.notify_all();
  }
  void start() { stopped_ = false; }
  bool stopped() const { return stopped_.load(); }

  // Takes n bytes; false (and nothing taken) when fewer are left.
  bool take(size_t n) {
    size_t used = used_.load();
    do {
      if (used + n > limit_) return false;
    } while (!used_.compare_exchange_weak(used, used + n));
    return true;
  }
  void give(size_t n) { used_ -= n; }
  size_t limit() const { return limit_; }
  size_t used() const { return used_.load(); }
  std::chrono::milliseconds wait() const { return wait_; }

 private:
  using Clock = std::chrono::steady_clock;
  const size_t limit_;
  const std::chrono::milliseconds wait_;
  std::mutex mutex_;
  std::condition_variable free_;
  bool rendering_ = false;
  std::string client_;                    // the one rendering's
  std::set<std::string> clients_;         // those with a rendering waiting or running
  Clock::time_point started_{}, next_{};  // the rendering's start; when the next may start
  std::atomic<bool> stopped_{false};
  std::atomic<size_t> used_{0};
};

}  // namespace potop::jinja
