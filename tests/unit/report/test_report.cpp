// Loss curves and attention maps: the pictures hold what they claim to show.
#include <gtest/gtest.h>

#include <fstream>

#include "models/gpt/gpt.h"
#include "core/error.h"
#include "report/attention_map.h"
#include "tokenizer/char_tokenizer.h"
#include "report/loss_plot.h"
#include "support/testing.h"

namespace potop {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(LossPlot, DrawsTrainAndEvalSeries) {
  const testing::TempDir dir("loss_plot");
  {
    std::ofstream out(dir / "metrics.jsonl");
    for (int s = 1; s <= 20; ++s) out << R"({"kind":"train","step":)" << s << R"(,"loss":)" << 4.0 - 0.1 * s << "}\n";
    out << R"({"kind":"eval","step":0,"train_loss":4.1,"val_loss":4.2})" << "\n";
    out << R"({"kind":"eval","step":20,"train_loss":2.1,"val_loss":2.3})" << "\n";
  }
  const std::string svg = loss_curve_svg(dir / "metrics.jsonl");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 3u);
  EXPECT_NE(svg.find("validation loss"), std::string::npos);
  // The per-step series has one point per record.
  const size_t at = svg.find("class=\"train loss (per step)\"");
  ASSERT_NE(at, std::string::npos);
  const std::string points = svg.substr(svg.find("points=\"", at) + 8);
  EXPECT_EQ(count(points.substr(0, points.find('"')), ","), 20u);
}

TEST(LossPlot, BadFilesNameThePath) {
  const testing::TempDir dir("loss_plot_bad");
  EXPECT_THROW(loss_curve_svg(dir / "missing.jsonl"), Error);
  std::ofstream(dir / "garbage.jsonl") << "not json\n";
  try {
    loss_curve_svg(dir / "garbage.jsonl");
    FAIL() << "garbage accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("garbage.jsonl: line 1"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "empty.jsonl") << "";
  EXPECT_THROW(loss_curve_svg(dir / "empty.jsonl"), Error);
}

TEST(AttentionMap, OneCausalMapPerLayerAndHead) {
  const CharTokenizer tok = CharTokenizer::from_text(U"ab <&>\n");
  GPTConfig c;
  c.vocab_size = tok.size(), c.block_size = 8, c.n_layer = 2, c.n_head = 3, c.n_embd = 12;
  GPT model(c);
  model.init_weights(1);
  const std::vector<int> ids = tok.encode(U"a<b& \n");
  const std::string html = attention_html(self_attention_maps(model, tok), ids);
  EXPECT_EQ(count(html, "<svg"), 6u);                 // 2 layers x 3 heads
  EXPECT_EQ(count(html, "<rect"), 6u * (6 * 7 / 2));  // the lower triangle of 6x6, per map
  EXPECT_NE(html.find("&lt;"), std::string::npos);    // characters are escaped
  EXPECT_EQ(html.find("<b&"), std::string::npos);
  EXPECT_NE(html.find("↵"), std::string::npos);       // a newline is shown, not swallowed
  const std::string one = attention_html(self_attention_maps(model, tok), ids, 1, 2);
  EXPECT_EQ(count(one, "<svg"), 1u);
  EXPECT_NE(one.find("layer 1, head 2"), std::string::npos);
}

TEST(AttentionMap, RejectsImpossibleRequests) {
  const CharTokenizer tok = CharTokenizer::from_text(U"abc");
  GPTConfig c;
  c.vocab_size = tok.size(), c.block_size = 4, c.n_layer = 1, c.n_head = 1, c.n_embd = 4;
  GPT model(c);
  auto message = [&](const std::vector<int>& ids, int layer, int head) {
    try {
      attention_html(self_attention_maps(model, tok), ids, layer, head);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message({0, 1, 2, 0, 1}, -1, -1).find("--prompt"), std::string::npos);
  EXPECT_NE(message({}, -1, -1).find("--prompt"), std::string::npos);
  EXPECT_NE(message({0}, 1, -1).find("--layer"), std::string::npos);
  EXPECT_NE(message({0}, -1, 5).find("--head"), std::string::npos);
}

}  // namespace
}  // namespace potop
