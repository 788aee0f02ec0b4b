// The processes of one training run and what they exchange. One process is the usual case
// (SingleProcess: every operation is the identity); under `mpirun -np P potop train` there are
// P ranks (MpiCommunicator, compiled only with POTOP_MPI), each a whole trainer with its own
// threads, that meet once per step to sum their gradients (docs/distributed.md).
//
// Every operation is collective: all ranks call it, in the same order, with the same sizes.
// Sums are taken in rank order, ((x_0 + x_1) + x_2) + …, whatever the MPI library's own
// algorithms would do, so a run with P ranks is bit-identical to itself whatever the timing
// and the network.
#pragma once
#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace potop {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks on this rank's machine (to share its cores between them).
  virtual int local_size() const = 0;
  // "Open MPI v4.1.4, 2 ranks on 1 host" — for the log.
  virtual std::string describe() const = 0;

  // data[i] = Σ_r data_r[i] on every rank, summed in rank order.
  virtual void sum_floats(float* data, size_t n) = 0;

  // The same sum, started now and finished by finish_sums(), so that it runs while the caller
  // computes (a bucket of gradients exchanged while the backward pass of earlier layers still
  // runs). data must stay untouched until finish_sums(). Buckets are summed element by element
  // in rank order like sum_floats, so how the buffer is cut into buckets does not change one bit
  // of the result; every rank must start the same buckets in the same order.
  virtual void start_sum_floats(float* data, size_t n) { sum_floats(data, n); }
  // Lets the started sums advance (MPI moves them on only inside its calls when there is no
  // progress thread): call it now and then while computing, from the thread that started them.
  virtual void progress() {}
  // Waits for every started sum (within the timeout).
  virtual void finish_sums() {}

  // What the timeout says: the step whose exchange is next (begin_step), and after how long a
  // rank that stopped without dying (a stuck filesystem, SIGSTOP) ends the run:
  //   rank 1 did not reach the gradient exchange of step 17 within 300 s; stopping every rank; <note>
  // printed by the rank that noticed, which then aborts every rank (exit code 1). 0: wait forever.
  virtual void set_timeout(double /*seconds*/, const std::string& /*note*/) {}
  virtual void begin_step(long /*step*/) {}
  // Σ_r value_r on every rank, in rank order.
  virtual double sum(double value) = 0;
  // True on every rank when it is true on any (a stop request seen by one rank stops all).
  virtual bool any(bool value) = 0;
  // Every rank's string, in rank order, on every rank.
  virtual std::vector<std::string> all_strings(const std::string& mine) = 0;
  // Ends every rank of the run with this exit code; for a failure after which the other ranks
  // could be left waiting in a collective. Does not return.
  [[noreturn]] virtual void abort(int code) = 0;
};

class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  std::string describe() const override { return "one process"; }
  void sum_floats(float*, size_t) override {}
  double sum(double value) override { return value; }
  bool any(bool value) override { return value; }
  std::vector<std::string> all_strings(const std::string& mine) override { return {mine}; }
  [[noreturn]] void abort(int code) override;
};

// True when this process was started by an MPI launcher (mpirun, srun): OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK is set. Only then is MPI initialised, so a plain `potop train` never
// loads MPI's runtime, prints its messages or waits for it.
bool launched_by_mpi();
// MpiCommunicator when launched by MPI, SingleProcess otherwise. Throws potop::Error when
// launched by MPI and this potop was built without it (POTOP_MPI=OFF): each rank would train
// alone and write the same files.
std::unique_ptr<Communicator> make_communicator();

// The agreement at the end of a run's setup, before anything is written: every rank calls it
// exactly once, with "" and its fingerprint (potop version, options, data and tokenizer
// hashes) when its setup succeeded, or with its error when it failed. Returns, on every rank,
// "" when all ranks succeeded with equal fingerprints, or else one message that names the rank
// and what differs — the run is refused (rank 0 prints it, every rank exits 1).
std::string agree_on_setup(Communicator& comm, const std::string& error, const nlohmann::json& fingerprint);

}  // namespace potop
