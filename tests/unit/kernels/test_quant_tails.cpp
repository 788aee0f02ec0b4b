// The integer kernels on rows whose blocks are not whole groups of eight (kernels/quant.h): every
// number of last blocks, alone and after whole groups, bit-identical across ISAs and M, and
// reading nothing past the last row (the matrix ends at a page that may not be read).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/quant.h"

namespace potop::test_quant_tails {  // its own: test_quant.cpp has a kIsas and an isa_name too
namespace {

constexpr QuantIsa kIsas[] = {QuantIsa::kScalar, QuantIsa::kAvx2, QuantIsa::kAvx512, QuantIsa::kAvx512Vnni};

const char* isa_name(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::kScalar: return "scalar";
    case QuantIsa::kAvx2: return "avx2";
    case QuantIsa::kAvx512: return "avx512";
    case QuantIsa::kAvx512Vnni: return "avx512vnni";
  }
  return "?";
}

// `bytes` readable bytes that end where an unreadable page begins.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = (bytes + page - 1) / page * page + page;
    void* p = mmap(nullptr, pages_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<unsigned char*>(p);
    if (mprotect(base_ + pages_ - page, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
    data_ = base_ + pages_ - page - bytes;
  }
  ~GuardedBuffer() { munmap(base_, pages_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  unsigned char* data() { return data_; }

 private:
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
  size_t pages_ = 0;
};

TEST(QuantTailTest, EveryNumberOfLastBlocksIsBitIdenticalAndStaysInTheRow) {
  std::mt19937 rng(41);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // 1-7 blocks alone, 8-15 (a group and the rest), and past K = 1024 (33-40 blocks), where the
  // integer path also takes four rows of x at a time.
  std::vector<int> block_counts;
  for (int nb = 1; nb <= 16; ++nb) block_counts.push_back(nb);
  for (int nb = 33; nb <= 40; ++nb) block_counts.push_back(nb);
  for (QuantType t : {QuantType::kQ8_0, QuantType::kQ4_0})
    for (int nb : block_counts) {
      const int K = nb * 32, N = 3;
      const size_t rb = quant_row_bytes(t, K);
      GuardedBuffer W(rb * N);
      std::vector<float> w(K);
      for (int n = 0; n < N; ++n) {
        for (float& v : w) v = normal(rng);
        quantize_row(t, w.data(), K, W.data() + n * rb);
      }
      for (int M : {1, 3, 5}) {
        std::vector<float> X(static_cast<size_t>(M) * K);
        for (float& v : X) v = normal(rng);
        std::vector<float> want(static_cast<size_t>(M) * N);
        quant_matmul_with(QuantIsa::kScalar, t, W.data(), N, K, X.data(), M, want.data(), false);
        const bool integer_path = M < 4 || K > 1024;  // quant.h: otherwise panels and sgemm
        for (QuantIsa isa : kIsas) {
          if (!quant_isa_available(isa)) continue;
          std::vector<float> Y(want.size());
          quant_matmul_with(isa, t, W.data(), N, K, X.data(), M, Y.data(), false);
          if (!integer_path) continue;  // still run: it must not read past the matrix
          for (size_t i = 0; i < Y.size(); ++i)
            ASSERT_EQ(Y[i], want[i]) << to_string(t) << " " << isa_name(isa) << " blocks " << nb << " M " << M << " at " << i;
        }
      }
      // The exact block sums of the last row, which ends at the unreadable page.
      std::vector<float> x(K);
      for (float& v : x) v = normal(rng);
      std::vector<int8_t> q(K);
      std::vector<float> d(nb);
      std::vector<int32_t> sum(nb), want(nb);
      quantize_activations(x.data(), K, q.data(), d.data(), sum.data());
      const unsigned char* last = W.data() + (N - 1) * rb;
      quant_block_sums_with(QuantIsa::kScalar, t, last, q.data(), sum.data(), K, want.data());
      for (QuantIsa isa : kIsas) {
        if (!quant_isa_available(isa)) continue;
        std::vector<int32_t> got(nb, -1);
        quant_block_sums_with(isa, t, last, q.data(), sum.data(), K, got.data());
        EXPECT_EQ(got, want) << to_string(t) << " " << isa_name(isa) << " blocks " << nb;
      }
    }
}

}  // namespace
}  // namespace potop::test_quant_tails
