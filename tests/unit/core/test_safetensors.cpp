// The safetensors container: round trips, interoperability with numpy, strict validation of
// damaged files, and checkpoints that survive a failed overwrite.
#include "core/safetensors.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "support/testing.h"

namespace potop {
namespace {

namespace fs = std::filesystem;

// Expects loading `path` to fail with a message that names the path and contains `what`.
void expect_load_error(const fs::path& path, const std::string& what) {
  const auto msg = testing::error_message([&] { SafetensorsFile f(path); });
  EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << "expected '" << what << "' in: " << msg;
}

// A safetensors file from a header text and data bytes, with no padding or checksum.
std::string container(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

uint64_t header_length(const std::string& file) {
  uint64_t n;
  std::memcpy(&n, file.data(), 8);
  return n;
}

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {digits[c >> 4], digits[c & 15]};
  return out;
}

// Tensors of several dtypes and shapes, written in a deliberately unsorted order.
struct Sample {
  std::vector<float> w = {0.5f, -1.0f, 2.0f, 3.5f, 4.0f, 1.25f};  // F32 (2, 3)
  std::vector<double> d = {1e-300, -2.5, 3.0, 1e300};              // F64 (4)
  std::vector<int32_t> ids = {1, -2, 3, -4, 5, -6, 7, -8};         // I32 (2, 2, 2)
  int64_t step = -1234567890123ll;                                 // I64 scalar
  float one = 42.0f;                                               // F32 (1)
  std::vector<uint8_t> bytes = {1, 2, 3, 250, 255};                // U8 (5), odd length, last

  std::vector<SafetensorsEntry> entries() const {
    return {{"zeta.w", Dtype::F32, {2, 3}, w.data()},  {"alpha.d", Dtype::F64, {4}, d.data()},
            {"ids", Dtype::I32, {2, 2, 2}, ids.data()}, {"step", Dtype::I64, {}, &step},
            {"émbed.one", Dtype::F32, {1}, &one},       {"empty", Dtype::F32, {0, 3}, nullptr},
            {"raw", Dtype::U8, {5}, bytes.data()}};
  }
  Metadata metadata() const {
    return {{"config", R"({"n_layer": 2, "n_head": 4})"}, {"note", "日本語 — ünïcødé ✓"}, {"blank", ""}};
  }
};

TEST(Safetensors, Xxh64MatchesReferenceValues) {
  const std::string spam = "Nobody inspects the spammish repetition";
  EXPECT_EQ(xxh64("", 0), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(xxh64("a", 1), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(xxh64("abc", 3), 0x44BC2CF5AD770999ull);
  EXPECT_EQ(xxh64(spam.data(), spam.size()), 0xFBCEA83C8A378BF1ull);
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 31 + 7) % 256);
  EXPECT_EQ(xxh64(data.data(), data.size()), 0x99594F4828043D35ull);
  EXPECT_EQ(checksum_string(0x99594F4828043D35ull), "xxh64:99594f4828043d35");
  // Streaming in pieces of any size gives the same hash.
  for (size_t piece : {1u, 3u, 7u, 31u, 32u, 33u, 100u, 999u}) {
    Xxh64 h;
    for (size_t i = 0; i < data.size(); i += piece) h.update(data.data() + i, std::min(piece, data.size() - i));
    EXPECT_EQ(h.digest(), 0x99594F4828043D35ull) << "piece " << piece;
  }
}

TEST(Safetensors, RoundTripsDtypesShapesAndMetadata) {
  const testing::TempDir dir("st_roundtrip");
  const auto path = dir / "model.safetensors";
  const Sample s;
  write_safetensors(path, s.entries(), s.metadata());

  const std::string raw = read_file(path);
  EXPECT_EQ((8 + header_length(raw)) % 8, 0u);  // data section 8-byte aligned

  SafetensorsFile f(path);
  EXPECT_EQ(f.path(), path.string());
  EXPECT_EQ(f.names(), (std::vector<std::string>{"zeta.w", "alpha.d", "ids", "step", "émbed.one", "empty", "raw"}));
  for (const auto& e : s.entries()) {
    ASSERT_TRUE(f.has(e.name)) << e.name;
    const auto& info = f.info(e.name);
    EXPECT_EQ(info.dtype, e.dtype) << e.name;
    EXPECT_EQ(info.shape, e.shape) << e.name;
    const auto bytes = f.bytes(e.name);
    ASSERT_EQ(bytes.size(), shape_numel(e.shape) * dtype_size(e.dtype)) << e.name;
    if (!bytes.empty()) {
      EXPECT_EQ(std::memcmp(bytes.data(), e.data, bytes.size()), 0) << e.name;
    }
  }
  EXPECT_FALSE(f.has("nope"));
  EXPECT_EQ(f.info("step").numel(), 1u);
  EXPECT_EQ(f.info("empty").numel(), 0u);

  const auto w = f.f32("zeta.w");
  EXPECT_EQ(std::vector<float>(w.begin(), w.end()), s.w);
  EXPECT_EQ(f.f32("émbed.one")[0], 42.0f);
  std::vector<float> dst(6);
  f.copy_f32_into("zeta.w", dst.data(), {2, 3});
  EXPECT_EQ(dst, s.w);
  f.copy_f32_into("empty", nullptr, {0, 3});

  Metadata expected = s.metadata();
  expected[kChecksumKey] = f.metadata().at(kChecksumKey);
  EXPECT_EQ(f.metadata(), expected);
  EXPECT_EQ(f.metadata_value("note"), std::optional<std::string>("日本語 — ünïcødé ✓"));
  EXPECT_EQ(f.metadata_value("absent"), std::nullopt);
  EXPECT_EQ(f.metadata().at(kChecksumKey).rfind("xxh64:", 0), 0u);
}

TEST(Safetensors, EmptyFileAndStaleChecksumInMetadata) {
  const testing::TempDir dir("st_empty");
  const auto path = dir / "empty.safetensors";
  write_safetensors(path, {});
  SafetensorsFile empty(path);
  EXPECT_TRUE(empty.names().empty());
  EXPECT_EQ(empty.metadata_value(kChecksumKey), checksum_string(xxh64("", 0)));

  // Re-saving metadata copied from another file must not keep its (now wrong) checksum.
  const float x = 1.0f;
  write_safetensors(path, {{"x", Dtype::F32, {1}, &x}}, {{kChecksumKey, "xxh64:0000000000000000"}});
  EXPECT_EQ(SafetensorsFile(path).f32("x")[0], 1.0f);
}

TEST(Safetensors, NumpyReadsPotopFilesWithTheDocumentedSnippet) {
  // Python with numpy is a required test dependency (scripts/setup.sh --all), as for the torch oracle:
  // without it this is a failure, never a skip.
  ASSERT_EQ(::access(POTOP_PYTHON, X_OK), 0) << POTOP_PYTHON << " not found: run scripts/setup.sh --all";
  // The reader in docs/checkpoint-format.md is what users copy: test that very code.
  const std::string doc = read_file(testing::source_dir() / "docs" / "checkpoint-format.md");
  const auto start = doc.find("```python\n");
  ASSERT_NE(start, std::string::npos) << "no python snippet in docs/checkpoint-format.md";
  const auto end = doc.find("```", start + 10);
  ASSERT_NE(end, std::string::npos);
  const std::string snippet = doc.substr(start + 10, end - start - 10);

  const testing::TempDir dir("st_numpy");
  const auto path = dir / "model.safetensors";
  const Sample s;
  write_safetensors(path, s.entries(), s.metadata());
  const auto script = dir / "read.py";
  write_file_atomic(script, snippet + R"(
import sys
t, m = read_safetensors(sys.argv[1])
print(t["zeta.w"].shape, t["zeta.w"].dtype, float(t["zeta.w"][1, 2]))
print(t["step"].shape, int(t["step"]), t["ids"].shape, int(t["ids"][1, 1, 1]))
print(t["empty"].shape, t["raw"].tolist(), float(t["alpha.d"][3]))
print(m["note"].encode().hex(), sorted(t))
)");
  const std::string command = "PYTHONIOENCODING=utf-8 " + std::string(POTOP_PYTHON) + " " + script.string() + " " + path.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int status = ::pclose(pipe);
  ASSERT_EQ(status, 0) << out;
  const std::string expected = "(2, 3) float32 1.25\n() -1234567890123 (2, 2, 2) -8\n(0, 3) [1, 2, 3, 250, 255] 1e+300\n" +
                               hex(s.metadata().at("note")) +
                               " ['alpha.d', 'empty', 'ids', 'raw', 'step', 'zeta.w', 'émbed.one']\n";
  EXPECT_EQ(out, expected);
}

TEST(Safetensors, LoadsFilesFromOtherToolsWithoutChecksumOrPadding) {
  const testing::TempDir dir("st_foreign");
  const auto path = dir / "foreign.safetensors";
  // Header of odd length (no padding), listed out of data order, no metadata; the F32 tensor
  // after a 3-byte U8 one is misaligned in memory.
  const float w[2] = {1.5f, -2.0f};
  std::string data = "abc";
  data.append(reinterpret_cast<const char*>(w), 8);
  write_file_atomic(path, container(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[3,11]},)"
                                    R"("b":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})",
                                    data));
  SafetensorsFile f(path);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"b", "w"}));
  EXPECT_TRUE(f.metadata().empty());
  float got[2];
  f.copy_f32_into("w", got, {2});
  EXPECT_EQ(got[0], 1.5f);
  EXPECT_EQ(got[1], -2.0f);
  const auto msg = testing::error_message([&] { (void)f.f32("w"); });
  EXPECT_NE(msg.find("aligned"), std::string::npos) << msg;
}

TEST(Safetensors, WrongDtypeShapeOrNameIsAnErrorNamingTheTensor) {
  const testing::TempDir dir("st_accessors");
  const auto path = dir / "model.safetensors";
  const Sample s;
  write_safetensors(path, s.entries(), s.metadata());
  SafetensorsFile f(path);

  auto msg = testing::error_message([&] { (void)f.f32("ids"); });
  EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("'ids'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("I32"), std::string::npos) << msg;

  std::vector<float> dst(6);
  msg = testing::error_message([&] { f.copy_f32_into("zeta.w", dst.data(), {3, 2}); });
  EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("'zeta.w'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(3, 2)"), std::string::npos) << msg;

  msg = testing::error_message([&] { f.copy_f32_into("alpha.d", dst.data(), {4}); });
  EXPECT_NE(msg.find("F64"), std::string::npos) << msg;

  msg = testing::error_message([&] { (void)f.info("nope"); });
  EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
}

TEST(Safetensors, TruncatedOrExtendedFilesAreErrors) {
  const testing::TempDir dir("st_truncated");
  const auto good = dir / "good.safetensors";
  const Sample s;
  write_safetensors(good, s.entries(), s.metadata());
  const std::string raw = read_file(good);
  const size_t data_start = 8 + header_length(raw);
  const std::vector<size_t> cuts = {0, 1, 7, 8, 9, data_start / 2, data_start - 1, data_start,
                                    data_start + 1, (data_start + raw.size()) / 2, raw.size() - 1};
  for (size_t cut : cuts) {
    const auto path = dir / ("cut_" + std::to_string(cut) + ".safetensors");
    write_file_atomic(path, std::string_view(raw).substr(0, cut));
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(raw.size()));
    expect_load_error(path, "");
  }
  const auto path = dir / "short.safetensors";
  write_file_atomic(path, raw.substr(0, 5));
  expect_load_error(path, "too short");

  const auto extended = dir / "extended.safetensors";
  write_file_atomic(extended, raw + "junk");
  expect_load_error(extended, "4 trailing bytes");
}

TEST(Safetensors, FlippedDataByteFailsTheChecksum) {
  const testing::TempDir dir("st_flipped");
  const Sample s;
  write_safetensors(dir / "good.safetensors", s.entries(), s.metadata());
  const std::string raw = read_file(dir / "good.safetensors");
  const size_t data_start = 8 + header_length(raw);
  for (size_t pos : {data_start, data_start + 13, raw.size() - 1}) {
    std::string bad = raw;
    bad[pos] ^= 0x10;
    const auto path = dir / ("flip_" + std::to_string(pos) + ".safetensors");
    write_file_atomic(path, bad);
    expect_load_error(path, "checksum mismatch — the file is corrupted or was modified");
  }
}

TEST(Safetensors, GarbageHeaderLengthIsAnError) {
  const testing::TempDir dir("st_header_length");
  const Sample s;
  write_safetensors(dir / "good.safetensors", s.entries());
  const std::string raw = read_file(dir / "good.safetensors");

  std::string bad = raw;
  std::memset(bad.data(), 0xFF, 8);
  write_file_atomic(dir / "huge.safetensors", bad);
  expect_load_error(dir / "huge.safetensors", "absurd");

  const uint64_t past = raw.size() - 7;
  std::memcpy(bad.data(), &past, 8);
  write_file_atomic(dir / "past.safetensors", bad);
  expect_load_error(dir / "past.safetensors", "runs past the end");

  write_file_atomic(dir / "text.safetensors", std::string_view("this is not a checkpoint at all"));
  expect_load_error(dir / "text.safetensors", "");
}

TEST(Safetensors, MalformedHeadersAreErrors) {
  const testing::TempDir dir("st_malformed");
  struct Case {
    std::string header;
    size_t data_bytes;
    std::string expected;
  };
  const std::string ok_entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  const std::vector<Case> cases = {
      {"{not json", 0, "not valid JSON"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,8e49984]}})", 4, "not valid JSON"},  // found by fuzz/
      {"", 0, "not valid JSON"},
      {"[1, 2]", 0, "not a JSON object"},
      {R"({"w": 5})", 0, "'w': entry is not an object"},
      {R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4, "missing dtype"},
      {R"({"w":{"dtype":3,"shape":[1],"data_offsets":[0,4]}})", 4, "dtype is not a string"},
      {R"({"w":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]}})", 4, "unknown dtype 'Q4'"},
      {R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4, "missing shape"},
      {R"({"w":{"dtype":"F32","shape":1,"data_offsets":[0,4]}})", 4, "shape is not an array"},
      {R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "negative dimension"},
      {R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4, "not an integer"},
      {R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}})", 4, "too large"},
      {R"({"w":{"dtype":"F32","shape":[1]}})", 4, "missing data_offsets"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4, "pair of non-negative integers"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4, "pair of non-negative integers"},
      {R"({"w":{"dtype":"F32","shape":[1],"data_offsets":"0,4"}})", 4, "pair of non-negative integers"},
      {R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", 4, "end before they begin"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4, "beyond the data section"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4, "needs 8 bytes but data_offsets cover 4"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       8, "tensors 'a' and 'b' overlap"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
       12, "bytes 4 to 8 of the data section belong to no tensor"},
      {R"({"w":)" + ok_entry + "}", 8, "4 trailing bytes"},
      {R"({"w":)" + ok_entry + R"(,"w":)" + ok_entry + "}", 4, "'w' twice"},
      {R"({"__metadata__":{"k":1},"w":)" + ok_entry + "}", 4, "__metadata__ value for 'k' is not a string"},
      {R"({"__metadata__":["x"],"w":)" + ok_entry + "}", 4, "__metadata__ is not an object"},
      {R"({"__metadata__":{"potop.checksum":"md5:abc"},"w":)" + ok_entry + "}", 4, "unsupported checksum"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto path = dir / ("case_" + std::to_string(i) + ".safetensors");
    write_file_atomic(path, container(cases[i].header, std::string(cases[i].data_bytes, '\0')));
    SCOPED_TRACE(cases[i].header);
    expect_load_error(path, cases[i].expected);
  }
  // The same checks apply to bytes already in memory.
  const auto msg = testing::error_message([] { SafetensorsFile::from_bytes(container("{oops", ""), "in-memory"); });
  EXPECT_EQ(msg.rfind("in-memory: header is not valid JSON", 0), 0u) << msg;
  EXPECT_EQ(SafetensorsFile::from_bytes(container(R"({"w":)" + ok_entry + "}", std::string(4, '\0')), "m").names(),
            std::vector<std::string>{"w"});
}

TEST(Safetensors, FailedOverwriteUnderFileSizeLimitKeepsTheOldCheckpoint) {
  const testing::TempDir dir("st_fsize");
  const auto path = dir / "model.safetensors";
  const Sample s;
  write_safetensors(path, s.entries(), s.metadata());
  const std::string before = read_file(path);

  const pid_t pid = ::fork();
  if (pid == 0) {
    rlimit rl{64 * 1024, 64 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(3);
    ::signal(SIGXFSZ, SIG_IGN);
    const std::vector<float> big(1u << 20, 0.25f);  // 4 MiB
    int code = 2;
    try {
      write_safetensors(path, {{"big", Dtype::F32, {1 << 20}, big.data()}});
      code = 1;
    } catch (const Error& e) {
      code = std::string(e.what()).find(path.string()) != std::string::npos ? 0 : 2;
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "0: Error naming the path, 1: no error, 2: other failure";

  EXPECT_EQ(read_file(path), before);
  SafetensorsFile f(path);
  EXPECT_EQ(f.f32("zeta.w")[5], 1.25f);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"model.safetensors"});
}

}  // namespace
}  // namespace potop
