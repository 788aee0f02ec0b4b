// The MPI communicator: compiled only when CMake found MPI (POTOP_MPI).
//
// sum_floats is a reduce-scatter and an all-gather, like the ring all-reduce MPI_Allreduce
// uses for large buffers, but with the sum written out so that its order is fixed:
//   1. the buffer is cut into P equal chunks (the last padded); MPI_Alltoall sends chunk c of
//      every rank to rank c;
//   2. rank c adds its P copies of chunk c in rank order: ((x_0 + x_1) + x_2) + …;
//   3. MPI_Allgather gives every rank every summed chunk.
// Each rank sends and receives 2·(P-1)/P of the buffer, as in a ring all-reduce, and the result
// does not depend on the MPI library's choice of algorithm, the network or the timing
// (MPI_Allreduce's does: docs/distributed.md).
//
// Errors: MPI_ERRORS_RETURN on MPI_COMM_WORLD, so a failed call becomes a potop::Error; a rank
// that dies is seen by mpirun, which ends the others (Open MPI's default).
#include <mpi.h>

#include <algorithm>
#include <string>
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
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    library_ = std::string(version, static_cast<size_t>(length));
    library_ = library_.substr(0, library_.find(','));  // "Open MPI v4.1.4"
    if (const size_t nl = library_.find('\n'); nl != std::string::npos) library_.resize(nl);
  }
  ~MpiCommunicator() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  std::string describe() const override {
    return library_ + ", " + std::to_string(size_) + " ranks on " + std::to_string(hosts_) + " host" +
           (hosts_ == 1 ? "" : "s");
  }

  void sum_floats(float* data, size_t n) override {
    const profile::Scope scope("allreduce");
    // --profile: time spent waiting for the slowest rank apart from the exchange itself.
    if (profile::enabled()) {
      const profile::Scope wait("wait for ranks");
      check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    }
    const profile::Scope exchange("exchange");
    const size_t P = static_cast<size_t>(size_);
    const size_t chunk = (n + P - 1) / P;
    POTOP_CHECK(chunk <= static_cast<size_t>(INT32_MAX), "gradient chunk too large for one MPI message");
    send_.resize(chunk * P);
    recv_.resize(chunk * P);
    std::copy_n(data, n, send_.begin());
    std::fill(send_.begin() + static_cast<long>(n), send_.end(), 0.0f);
    const int count = static_cast<int>(chunk);
    check(MPI_Alltoall(send_.data(), count, MPI_FLOAT, recv_.data(), count, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Alltoall");
    float* mine = recv_.data();  // rank 0's copy of my chunk, then += rank 1's, …
    for (size_t r = 1; r < P; ++r) {
      const float* part = recv_.data() + r * chunk;
#pragma omp simd
      for (size_t i = 0; i < chunk; ++i) mine[i] += part[i];
    }
    check(MPI_Allgather(mine, count, MPI_FLOAT, send_.data(), count, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Allgather");
    std::copy_n(send_.begin(), n, data);
  }

  double sum(double value) override {
    std::vector<double> all(static_cast<size_t>(size_));
    check(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD), "MPI_Allgather");
    double total = 0;
    for (double v : all) total += v;
    return total;
  }

  bool any(bool value) override {
    int mine = value ? 1 : 0, result = 0;
    check(MPI_Allreduce(&mine, &result, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD), "MPI_Allreduce");
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
  std::string library_;
  std::vector<float> send_, recv_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace potop
