#include "data/text_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <unistd.h>

#include "core/error.h"
#include "core/hash.h"
#include "support/testing.h"

namespace potop {
namespace {

std::string error_of(const std::filesystem::path& p) {
  return testing::error_message([&] { read_text_file(p); });
}

TEST(TextFile, ReadsBytesExactly) {
  const testing::TempDir dir("text_ok");
  const std::string text = "Zażółć gęślą jaźń\r\nline 2 😀\n";
  testing::write_file(dir / "a.txt", text);
  EXPECT_EQ(read_text_file(dir / "a.txt"), text);
  EXPECT_EQ(read_utf8_file(dir / "a.txt"), U"Zażółć gęślą jaźń\r\nline 2 😀\n");
}

TEST(TextFile, ReadsFilesLargerThanOneBuffer) {
  const testing::TempDir dir("text_big");
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "wiersz " + std::to_string(i) + " ż\n";
  testing::write_file(dir / "big.txt", text);
  EXPECT_EQ(read_text_file(dir / "big.txt"), text);
}

TEST(TextFile, ErrorsNameThePath) {
  const testing::TempDir dir("text_err");
  const auto missing = dir / "missing.txt";
  EXPECT_EQ(error_of(missing), missing.string() + ": file not found");
  EXPECT_EQ(error_of(dir), dir.path().string() + ": is a directory, expected a text file");
  testing::write_file(dir / "empty.txt", "");
  EXPECT_EQ(error_of(dir / "empty.txt"), (dir / "empty.txt").string() + ": file is empty");
  testing::write_file(dir / "bin.dat", std::string("abc\0def", 7));
  EXPECT_EQ(error_of(dir / "bin.dat"),
            (dir / "bin.dat").string() + ": looks binary (NUL byte at offset 3), expected UTF-8 text");
  // Devices and pipes are refused before anything is read: /dev/zero would never end.
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/null"})
    EXPECT_EQ(error_of(device), std::string(device) + ": not a regular file (a device, pipe or socket?); expected a text file");
}

TEST(TextFile, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root can read any file";
  const testing::TempDir dir("text_perm");
  testing::write_file(dir / "secret.txt", "abc");
  std::filesystem::permissions(dir / "secret.txt", std::filesystem::perms::none);
  EXPECT_EQ(error_of(dir / "secret.txt").rfind((dir / "secret.txt").string() + ": cannot open (", 0), 0u);
  std::filesystem::permissions(dir / "secret.txt", std::filesystem::perms::owner_all);
}

TEST(TextFile, Utf8ErrorsGiveThePathOffsetAndLine) {
  const testing::TempDir dir("text_utf8");
  const auto p = dir / "latin2.txt";
  testing::write_file(p, "ok\nZa\xBF\xF3\xB3\xE6\n");  // "Zażółć" in ISO-8859-2
  try {
    read_utf8_file(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(p.string() + ": invalid UTF-8 at byte offset 5 (line 2): ", 0), 0u)
        << e.what();
  }
}

TEST(TextFile, DropsLeadingByteOrderMark) {
  const testing::TempDir dir("text_bom");
  testing::write_file(dir / "bom.txt", "\xEF\xBB\xBFżaba\xEF\xBB\xBF");
  EXPECT_EQ(read_utf8_file(dir / "bom.txt"), U"żaba\uFEFF");  // only the leading one is a BOM
  testing::write_file(dir / "only.txt", "\xEF\xBB\xBF");
  EXPECT_THROW(read_utf8_file(dir / "only.txt"), Error);
}

TEST(Fnv1a64, MatchesPublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));  // streaming
  EXPECT_EQ(hash_hex(0xaf63dc4c8601ec8cull), "af63dc4c8601ec8c");
  EXPECT_EQ(hash_hex(1), "0000000000000001");
}

}  // namespace
}  // namespace potop
