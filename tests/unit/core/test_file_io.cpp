// Atomic writes: the target is either the complete new file or the untouched old one, and every
// failure is a potop::Error naming the path.
#include "core/file_io.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "support/testing.h"

namespace potop {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// In a child process limited to `limit` bytes per file, overwrites `path` with `bytes` atomically.
// Exit code 0: a potop::Error naming the path was thrown; 1: the write succeeded; 2: anything else.
// With ignore_signal false, SIGXFSZ keeps its default (fatal) action, so only write_file_atomic's
// own blocking of the signal keeps the child alive.
int write_in_child_with_file_limit(const fs::path& path, const std::string& bytes, rlim_t limit, bool ignore_signal) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    rlimit rl{limit, limit};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(3);
    ::signal(SIGXFSZ, ignore_signal ? SIG_IGN : SIG_DFL);
    int code = 2;
    try {
      write_file_atomic(path, bytes);
      code = 1;
    } catch (const Error& e) {
      code = std::string(e.what()).find(path.string()) != std::string::npos ? 0 : 2;
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 100 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

TEST(FileIo, WritesAndReadsBackAllThreeWays) {
  const testing::TempDir dir("fileio_roundtrip");
  const auto path = dir / "a.bin";

  write_file_atomic(path, std::string_view("hello"));
  EXPECT_EQ(read_file(path), "hello");

  // Overwrite with chunks, including an empty one and a multi-megabyte one.
  std::string big(3u << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  const std::string head = "head:";
  write_file_atomic(path, std::vector<ByteChunk>{{head.data(), head.size()}, {nullptr, 0}, {big.data(), big.size()}});
  EXPECT_EQ(read_file(path), head + big);

  // A callback with many small writes (buffered) and one large one.
  write_file_atomic(path, [&](FileSink& sink) {
    for (int i = 0; i < 100000; ++i) sink.write(std::string_view("0123456789").substr(i % 10, 1));
    sink.write(big.data(), big.size());
    EXPECT_EQ(sink.written(), 100000 + big.size());
  });
  const std::string got = read_file(path);
  ASSERT_EQ(got.size(), 100000 + big.size());
  EXPECT_EQ(got.substr(0, 12), "012345678901");
  EXPECT_EQ(got.substr(100000), big);

  write_file_atomic(path, std::string_view(""));
  EXPECT_EQ(read_file(path), "");
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"a.bin"});  // no temporary files left
}

TEST(FileIo, ReadErrorsNameThePath) {
  const testing::TempDir dir("fileio_read");
  const auto missing = dir / "missing.bin";
  auto msg = testing::error_message([&] { read_file(missing); });
  EXPECT_NE(msg.find(missing.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;

  msg = testing::error_message([&] { read_file(dir); });
  EXPECT_NE(msg.find(dir.path().string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
}

TEST(FileIo, WriteIntoMissingDirectoryIsAnErrorNamingThePath) {
  const testing::TempDir dir("fileio_missing_dir");
  const auto path = dir / "no" / "such" / "dir" / "a.bin";
  const auto msg = testing::error_message([&] { write_file_atomic(path, std::string_view("x")); });
  EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
  EXPECT_TRUE(entries_of(dir).empty());
}

TEST(FileIo, WriteOverADirectoryFailsAndLeavesNoTemporaryFile) {
  const testing::TempDir dir("fileio_over_dir");
  fs::create_directory(dir / "target");
  const auto msg = testing::error_message([&] { write_file_atomic(dir / "target", std::string_view("x")); });
  EXPECT_NE(msg.find((dir / "target").string()), std::string::npos) << msg;
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"target"});
}

TEST(FileIo, WriteIntoReadOnlyDirectoryKeepsOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions; the file-size-limit tests cover this";
  const testing::TempDir dir("fileio_readonly");
  const auto path = dir / "a.bin";
  write_file_atomic(path, std::string_view("old"));
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const auto msg = testing::error_message([&] { write_file_atomic(path, std::string_view("new")); });
  fs::permissions(dir, fs::perms::owner_all);
  EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"a.bin"});
}

TEST(FileIo, ThrowingWriterKeepsOldFileAndRemovesTemporary) {
  const testing::TempDir dir("fileio_throwing_writer");
  const auto path = dir / "a.bin";
  write_file_atomic(path, std::string_view("old"));
  EXPECT_THROW(write_file_atomic(path,
                                 [](FileSink& sink) {
                                   sink.write(std::string_view("partial new content"));
                                   throw std::runtime_error("writer gave up");
                                 }),
               std::runtime_error);
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"a.bin"});
}

TEST(FileIo, FileSizeLimitKeepsOldFileWhenSignalIgnored) {
  const testing::TempDir dir("fileio_fsize_ignored");
  const auto path = dir / "a.bin";
  const std::string old(1000, 'o');
  write_file_atomic(path, old);
  EXPECT_EQ(write_in_child_with_file_limit(path, std::string(1u << 20, 'n'), 64 * 1024, true), 0);
  EXPECT_EQ(read_file(path), old);
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"a.bin"});
}

TEST(FileIo, FileSizeLimitIsAnErrorEvenWhenSignalIsFatal) {
  const testing::TempDir dir("fileio_fsize_default");
  const auto path = dir / "a.bin";
  const std::string old(1000, 'o');
  write_file_atomic(path, old);
  // 100 + SIGXFSZ here would mean the child was killed instead of getting an Error.
  EXPECT_EQ(write_in_child_with_file_limit(path, std::string(1u << 20, 'n'), 64 * 1024, false), 0);
  EXPECT_EQ(read_file(path), old);
  EXPECT_EQ(entries_of(dir), std::vector<std::string>{"a.bin"});
  // A write under the limit still succeeds in such a process.
  EXPECT_EQ(write_in_child_with_file_limit(path, std::string(1000, 'n'), 64 * 1024, false), 1);
  EXPECT_EQ(read_file(path), std::string(1000, 'n'));
}

TEST(FileIo, EnsureWritableDirectory) {
  const testing::TempDir dir("fileio_ensure_dir");
  const auto nested = dir / "x" / "y" / "z";
  ensure_writable_directory(nested);
  EXPECT_TRUE(fs::is_directory(nested));
  EXPECT_TRUE(entries_of(nested).empty());  // the probe file is gone
  ensure_writable_directory(nested);        // already there: fine

  const auto file = dir / "plain.txt";
  write_file_atomic(file, std::string_view("x"));
  auto msg = testing::error_message([&] { ensure_writable_directory(file); });
  EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a directory"), std::string::npos) << msg;

  const auto under_file = file / "sub";
  msg = testing::error_message([&] { ensure_writable_directory(under_file); });
  EXPECT_NE(msg.find(under_file.string()), std::string::npos) << msg;

  if (::geteuid() != 0) {
    const auto ro = dir / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    msg = testing::error_message([&] { ensure_writable_directory(ro); });
    fs::permissions(ro, fs::perms::owner_all);
    EXPECT_NE(msg.find("not writable"), std::string::npos) << msg;
  }
}

TEST(FileIo, FileGroupAppearsWholeOrNotAtAll) {
  const testing::TempDir dir("fileio_group");
  {  // committed: every file, in place, no temporary left
    FileGroup group;
    write_file_atomic(dir / "a.bin", std::string_view("a"));
    write_file_atomic(dir / "b.bin", std::string_view("b"));
    EXPECT_EQ(entries_of(dir).size(), 2u);  // temporaries only, until the commit
    EXPECT_FALSE(fs::exists(dir / "a.bin"));
    group.commit();
  }
  EXPECT_EQ(read_file(dir / "a.bin"), "a");
  EXPECT_EQ(read_file(dir / "b.bin"), "b");
  EXPECT_EQ(entries_of(dir), (std::vector<std::string>{"a.bin", "b.bin"}));
  // The second write fails: the first, written, does not appear either; the old files stay.
  EXPECT_THROW(
      {
        FileGroup group;
        write_file_atomic(dir / "a.bin", std::string_view("new a"));
        write_file_atomic(dir / "b.bin", [](FileSink&) { throw Error("no space"); });
        group.commit();
      },
      Error);
  EXPECT_EQ(read_file(dir / "a.bin"), "a");
  EXPECT_EQ(entries_of(dir), (std::vector<std::string>{"a.bin", "b.bin"}));
  write_file_atomic(dir / "c.bin", std::string_view("c"));  // after the group: written at once
  EXPECT_EQ(read_file(dir / "c.bin"), "c");
}

TEST(FileIo, CheckOutputFileRefusesWhatItMayNotReplace) {
  const testing::TempDir dir("fileio_output");
  write_file_atomic(dir / "notes.txt", std::string_view("mine"));
  check_output_file(dir / "new.gguf", "--out", false);   // a new file: fine
  check_output_file(dir / "notes.txt", "--out", true);   // --force: fine
  auto msg = testing::error_message([&] { check_output_file(dir / "notes.txt", "--out", false); });
  EXPECT_NE(msg.find("--out " + (dir / "notes.txt").string() + ": exists; replace it with --force"), std::string::npos)
      << msg;
  fs::create_directory(dir / "model");
  write_file_atomic(dir / "model" / "config.json", std::string_view("{}"));
  write_file_atomic(dir / "model" / "best.safetensors", std::string_view("x"));
  msg = testing::error_message([&] { check_output_file(dir / "model" / "best.safetensors", "--out", true); });
  EXPECT_NE(msg.find("a model's directory"), std::string::npos) << msg;
  check_output_file(dir / "model" / "new.gguf", "--out", false);  // a new file beside a model: fine
  msg = testing::error_message([&] { check_output_file(dir / "model", "--out", true); });
  EXPECT_NE(msg.find("is a directory"), std::string::npos) << msg;
  msg = testing::error_message([&] { check_output_file(dir / "missing" / "x.gguf", "--out", false); });
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
}

}  // namespace
}  // namespace potop
