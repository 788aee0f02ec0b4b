// The MPI communicator: compiled only when CMake found MPI (POTOP_MPI).
//
// sum_floats is a reduce-scatter and an all-gather, like the ring all-reduce MPI_Allreduce
// uses for large buffers, but with the sum written out so that its order is fixed (per bucket:
// start_sum_floats starts one, non-blocking, while the backward pass goes on):
//   1. the buffer is cut into P equal chunks (the last padded); MPI_Alltoall sends chunk c of
//      every rank to rank c;
//   2. rank c adds its P copies of chunk c in rank order: ((x_0 + x_1) + x_2) + …;
//   3. MPI_Allgather gives every rank every summed chunk.
// Each rank sends and receives 2·(P-1)/P of the buffer, as in a ring all-reduce, and the result
// does not depend on the MPI library's choice of algorithm, the network or the timing
// (MPI_Allreduce's does: docs/distributed.md).
//
// Errors: MPI_ERRORS_RETURN on MPI_COMM_WORLD, so a failed call becomes a potop::Error; a rank
// that dies is seen by mpirun, which ends the others (Open MPI's default). A rank that stops
// without dying is caught by the timeout: every wait during training is a loop of MPI_Test with
// a deadline (--mpi-timeout), not a blocking call.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "dist/communicator.h"

namespace potop {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(length)) +
              " (another rank of the run has probably stopped)");
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int provided = 0;
    // Only the main thread calls MPI; OpenMP threads run the model in between.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw Error("MPI_Init_thread failed: cannot join the run started by mpirun");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    MPI_Comm_size(local, &local_size_);
    // Hosts: ranks whose local rank is 0.
    int local_rank = 0, leader = 0;
    MPI_Comm_rank(local, &local_rank);
    const int is_leader = local_rank == 0 ? 1 : 0;
    check(MPI_Allreduce(&is_leader, &leader, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    hosts_ = leader;
    MPI_Comm_free(&local);
    // The gradient sums' own communicators: their collectives may be under way while
    // MPI_COMM_WORLD's run, and each keeps one order of its own.
    check(MPI_Comm_dup(MPI_COMM_WORLD, &scatter_comm_), "MPI_Comm_dup");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &gather_comm_), "MPI_Comm_dup");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &arrival_comm_), "MPI_Comm_dup");
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    library_ = std::string(version, static_cast<size_t>(length));
    library_ = library_.substr(0, library_.find(','));  // "Open MPI v4.1.4"
    if (const size_t nl = library_.find('\n'); nl != std::string::npos) library_.resize(nl);
  }
  ~MpiCommunicator() override {
    for (MPI_Comm* c : {&scatter_comm_, &gather_comm_, &arrival_comm_})
      if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  std::string describe() const override {
    return library_ + ", " + std::to_string(size_) + " ranks on " + std::to_string(hosts_) + " host" +
           (hosts_ == 1 ? "" : "s");
  }

  void sum_floats(float* data, size_t n) override {
    start_sum_floats(data, n);
    finish_sums();
  }

  void start_sum_floats(float* data, size_t n) override {
    if (n == 0) return;
    const profile::Scope scope("start bucket");  // --profile: buckets per step
    if (count_ == pool_.size()) pool_.push_back(std::make_unique<Bucket>());
    Bucket& b = *pool_[count_++];
    const size_t P = static_cast<size_t>(size_);
    b.data = data, b.n = n, b.chunk = (n + P - 1) / P;
    POTOP_CHECK(b.chunk <= static_cast<size_t>(INT32_MAX), "gradient chunk too large for one MPI message");
    b.send.resize(b.chunk * P);  // the same sizes every step: no reallocation after the first
    b.recv.resize(b.chunk * P);
    std::copy_n(data, n, b.send.begin());
    std::fill(b.send.begin() + static_cast<long>(n), b.send.end(), 0.0f);
    const int count = static_cast<int>(b.chunk);
    check(MPI_Ialltoall(b.send.data(), count, MPI_FLOAT, b.recv.data(), count, MPI_FLOAT, scatter_comm_, &b.request),
          "MPI_Ialltoall");
  }

  void progress() override {
    if (count_ > 0) advance();
  }

  void finish_sums() override {
    if (count_ == 0) return;
    const profile::Scope scope("allreduce");
    // --profile: time spent waiting for the slowest rank apart from the exchange itself.
    if (profile::enabled()) {
      const profile::Scope wait("wait for ranks");
      check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    }
    const profile::Scope exchange("exchange");
    arrive();  // this rank's backward is done: tell the others it is here
    wait([&] { return advance(); }, "the gradient exchange of");
    count_ = next_gather_ = next_done_ = 0;
  }

  void set_timeout(double seconds, const std::string& note) override { timeout_s_ = seconds, note_ = note; }
  void begin_step(long step) override { step_ = step; }

  double sum(double value) override {
    std::vector<double> all(static_cast<size_t>(size_));
    MPI_Request request;
    arrive();
    check(MPI_Iallgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD, &request), "MPI_Iallgather");
    wait([&] { return test(request) && arrivals_done(); }, "the loss sum of");
    double total = 0;
    for (double v : all) total += v;
    return total;
  }

  bool any(bool value) override {
    arrive();
    int mine = value ? 1 : 0, result = 0;
    MPI_Request request;
    check(MPI_Iallreduce(&mine, &result, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD, &request), "MPI_Iallreduce");
    wait([&] { return test(request) && arrivals_done(); }, "the stop check after");
    return result != 0;
  }

  std::vector<std::string> all_strings(const std::string& mine) override {
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    int total = 0;
    for (int r = 0; r < size_; ++r) offsets[r] = total, total += lengths[r];
    std::string all(static_cast<size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
    return out;
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  int rank_ = 0, size_ = 1, local_size_ = 1, hosts_ = 1;
  // One bucket of a gradient sum: a reduce-scatter (MPI_Ialltoall, then the rank-ordered sum of
  // this rank's chunk), then an all-gather (MPI_Iallgather), each on its own communicator.
  struct Bucket {
    float* data = nullptr;
    size_t n = 0, chunk = 0;
    std::vector<float> send, recv;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  bool test(MPI_Request& request) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

  // Moves the started buckets on as far as they go; true when all are done. The all-gathers
  // start in bucket order (bucket i's after bucket i-1's), whatever order the reduce-scatters
  // finish in on this rank: MPI wants every rank to start the collectives of a communicator in
  // the same order.
  bool advance() {
    while (next_gather_ < count_) {
      Bucket& b = *pool_[next_gather_];
      if (!test(b.request)) break;
      float* mine = b.recv.data();  // rank 0's copy of my chunk, then += rank 1's, …
      for (size_t r = 1; r < static_cast<size_t>(size_); ++r) {
        const float* part = b.recv.data() + r * b.chunk;
#pragma omp simd
        for (size_t i = 0; i < b.chunk; ++i) mine[i] += part[i];
      }
      const int count = static_cast<int>(b.chunk);
      check(MPI_Iallgather(mine, count, MPI_FLOAT, b.send.data(), count, MPI_FLOAT, gather_comm_, &b.request),
            "MPI_Iallgather");
      ++next_gather_;
    }
    while (next_done_ < next_gather_) {
      Bucket& b = *pool_[next_done_];
      if (!test(b.request)) break;
      std::copy_n(b.send.begin(), b.n, b.data);
      ++next_done_;
    }
    return next_done_ == count_ && arrivals_done();
  }

  // Arrivals: on reaching a wait that a stopped rank would hold up, each rank sends the step to
  // every other (a few bytes, on its own communicator), so that on a timeout the rank that
  // noticed can say which ranks never came. (A rank stopped after sending it, inside the
  // exchange itself, gives "… did not finish" instead: a window of microseconds.)
  void arrive() {
    const size_t P = static_cast<size_t>(size_);
    arrival_step_ = step_;
    arrival_from_.assign(P, 0);
    arrival_requests_.assign(2 * P, MPI_REQUEST_NULL);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      check(MPI_Irecv(&arrival_from_[r], 1, MPI_LONG, r, 0, arrival_comm_, &arrival_requests_[r]), "MPI_Irecv");
      check(MPI_Isend(&arrival_step_, 1, MPI_LONG, r, 0, arrival_comm_, &arrival_requests_[P + r]), "MPI_Isend");
    }
  }
  bool arrivals_done() {
    int done = 0;
    check(MPI_Testall(static_cast<int>(arrival_requests_.size()), arrival_requests_.data(), &done,
                      MPI_STATUSES_IGNORE),
          "MPI_Testall");
    return done != 0;
  }

  // Calls done() until it says true, giving the core away in between (on a machine with as many
  // ranks as cores the other rank may need it to get here); past the timeout, ends the run.
  template <class Done>
  void wait(Done done, const char* what) {
    const auto start = std::chrono::steady_clock::now();
    while (!done()) {
      std::this_thread::yield();
      if (timeout_s_ > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s_)
        timed_out(what);
    }
  }

  [[noreturn]] void timed_out(const char* what) {
    std::string missing;
    int n_missing = 0;
    for (int r = 0; r < size_ && !arrival_requests_.empty(); ++r) {
      MPI_Request& request = arrival_requests_[r];
      if (r == rank_ || request == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (!done) missing += (n_missing++ ? ", " : "") + std::to_string(r);
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", timeout_s_);
    const std::string who = n_missing == 0 ? std::string(what) + " step " + std::to_string(step_) +
                                                 " did not finish"
                                           : std::string(n_missing == 1 ? "rank " : "ranks ") + missing +
                                                 " did not reach " + what + " step " + std::to_string(step_);
    std::fprintf(stderr, "potop: error: %s within %s s (--mpi-timeout; noticed by rank %d of %d); stopping every "
                 "rank%s%s\n", who.c_str(), seconds, rank_, size_, note_.empty() ? "" : "; ", note_.c_str());
    std::fflush(stderr);
    abort(1);
  }

  std::string library_;
  MPI_Comm scatter_comm_ = MPI_COMM_NULL, gather_comm_ = MPI_COMM_NULL, arrival_comm_ = MPI_COMM_NULL;
  std::vector<std::unique_ptr<Bucket>> pool_;  // the step's buckets, kept for the next step
  size_t count_ = 0, next_gather_ = 0, next_done_ = 0;  // started; all-gather started; done
  double timeout_s_ = 0;
  std::string note_;
  long step_ = 0, arrival_step_ = 0;
  std::vector<long> arrival_from_;
  std::vector<MPI_Request> arrival_requests_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace potop
