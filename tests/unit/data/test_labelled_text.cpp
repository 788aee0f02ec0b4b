// The label<TAB>text reader of classifiers (data/labelled_text.h): what it accepts (CRLF, a BOM,
// empty lines) and every line it refuses, by file and line.
#include "data/labelled_text.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/testing.h"

namespace potop {
namespace {

std::vector<LabelledExample> read(const testing::TempDir& dir, const std::string& bytes) {
  testing::write_file(dir / "d.tsv", bytes);
  return read_labelled_tsv((dir / "d.tsv").string());
}

std::string error_of(const testing::TempDir& dir, const std::string& bytes) {
  return testing::error_message([&] { read(dir, bytes); });
}

TEST(LabelledText, ReadsLinesWithCrlfBomAndEmptyLines) {
  const testing::TempDir dir("tsv_ok");
  const auto e = read(dir, "\xEF\xBB\xBFpos\tgood film\r\n\r\nneg\tbad film \n\nneg\tżle\n");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].label, "pos");
  EXPECT_EQ(e[0].text, "good film");
  EXPECT_EQ(e[1].text, "bad film ");
  EXPECT_EQ(e[1].line, 3);
  EXPECT_EQ(e[2].text, "żle");
  EXPECT_EQ(e[2].line, 5);
}

TEST(LabelledText, RefusesBadLinesNamingFileAndLine) {
  const testing::TempDir dir("tsv_bad");
  const std::string f = (dir / "d.tsv").string();
  EXPECT_EQ(error_of(dir, "pos\tok\nno tab here\n"), f + ":2: no tab: expected label<TAB>text");
  EXPECT_EQ(error_of(dir, "pos\tok\r\nneg\t\r\n"), f + ":2: empty text after label 'neg'");
  EXPECT_EQ(error_of(dir, "pos\t  \n"), f + ":1: empty text after label 'pos'");
  EXPECT_EQ(error_of(dir, "\tsome text\n"), f + ":1: empty label: expected label<TAB>text");
  EXPECT_NE(error_of(dir, "pos\tok\nneg\tbad \xC3\x28\n").find(f + ":2: invalid UTF-8"), std::string::npos);
  EXPECT_EQ(error_of(dir, "\n\r\n\n"), f + ": no examples (expected label<TAB>text lines)");
  // What would be read as data: a third column, a label's space (another class), a header.
  EXPECT_EQ(error_of(dir, "pos\tok\nneg\t17\tbad film\n"),
            f + ":2: more than one tab: expected label<TAB>text (a tab in the text: replace it with a space)");
  EXPECT_NE(error_of(dir, "pos\tok\nneg \tbad\n").find(f + ":2: label 'neg ' begins or ends with a space"),
            std::string::npos);
  EXPECT_NE(error_of(dir, "\nlabel\ttext\npos\tok\n").find(f + ":2: a header line ('label'<TAB>'text')"),
            std::string::npos);
  EXPECT_EQ(read(dir, "pos\tok\nlabel\tthe word label\n").size(), 2u);  // a class named "label", past line 1
}

TEST(LabelledText, ClassesAreTheSortedTrainingLabels) {
  const testing::TempDir dir("tsv_classes");
  const auto train = read(dir, "b\tx\na\ty\nc\tz\na\tw\n");
  const auto labels = label_set(train, "train.tsv");
  EXPECT_EQ(labels, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(class_ids(train, labels, "train.tsv"), (std::vector<int>{1, 0, 2, 0}));
}

TEST(LabelledText, RefusesOneClassAndUnseenLabels) {
  const testing::TempDir dir("tsv_one");
  EXPECT_EQ(testing::error_message([&] { label_set(read(dir, "a\tx\na\ty\n"), "t.tsv"); }),
            "t.tsv: every example has the label 'a'; a classifier needs at least two classes");
  const auto dev = read(dir, "a\tx\nd\ty\n");
  EXPECT_EQ(testing::error_message([&] { class_ids(dev, {"a", "b"}, "dev.tsv"); }),
            "dev.tsv:2: label 'd' was never seen in training (the classes: a, b)");
}

}  // namespace
}  // namespace potop
