// What one rendering of a chat template may take, and the budget renderings share
// (generate/jinja/value.h, render_budget.h): a template from a model file is untrusted code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "generate/jinja/template.h"

namespace potop::test_jinja_limits {
namespace {

using jinja::TemplateError;
using ::testing::HasSubstr;

const nlohmann::ordered_json kNoVariables = nlohmann::ordered_json::object();

// A text of 8 MiB: "x" doubled 23 times (16 MiB built on the way).
const std::string kEightMiB =
    "{% set ns = namespace(s='x', l=[]) %}{% for i in range(23) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}";

TemplateError render_error(const jinja::Template& t, jinja::RenderBudget* budget = nullptr) {
  try {
    t.render(kNoVariables, budget);
  } catch (const TemplateError& e) {
    return e;
  }
  ADD_FAILURE() << "rendered";
  return TemplateError(TemplateError::Kind::kRuntime, "");
}

TEST(JinjaLimits, ASourceOverOneMiBIsUnsupported) {
  // A model file's payload, not a template: refused before it is parsed (serve names it at start-up).
  const std::string text(1u << 20, 'x');
  EXPECT_EQ(jinja::Template(text).render(kNoVariables), text);
  try {
    const jinja::Template t(text + "x");
    ADD_FAILURE() << "parsed";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind, TemplateError::Kind::kUnsupported);
    EXPECT_THAT(e.what(), HasSubstr("more than 1 MiB"));
  }
}

TEST(JinjaLimits, ARenderingBuildsAtMost32MiB) {
  // The text appended to a list again and again: each + copies the list, texts and all (40 times
  // would be 6.5 GB of copies and a list of 320 MiB).
  const jinja::Template t(kEightMiB + "{% for i in range(40) %}{% set ns.l = ns.l + [ns.s] %}{% endfor %}{{ ns.l | length }}");
  const TemplateError e = render_error(t);
  EXPECT_EQ(e.kind, TemplateError::Kind::kUnsupported);
  EXPECT_THAT(e.what(), HasSubstr("more than 32 MiB"));
  // 16 MiB built, within it.
  EXPECT_EQ(jinja::Template(kEightMiB + "{{ ns.s | length }}").render(kNoVariables), "8388608");
}

TEST(JinjaLimits, ASharedBudgetTakenIsBusyAndGivenBackWhole) {
  jinja::RenderBudget budget(4u << 20, std::chrono::milliseconds(10));
  const TemplateError e = render_error(jinja::Template(kEightMiB + "{{ ns.s | length }}"), &budget);
  EXPECT_EQ(e.kind, TemplateError::Kind::kBusy);
  EXPECT_THAT(e.what(), HasSubstr("4 MiB, shared by every request"));
  EXPECT_EQ(budget.used(), 0u);  // what it took was given back when it failed
  // A chat's rendering takes a MiB of it while it runs, and gives it back.
  nlohmann::ordered_json chat = {{"messages", {{{"role", "user"}, {"content", "Cześć"}}}}};
  EXPECT_EQ(jinja::Template("{{ messages[0].content }}").render(chat, &budget), "Cześć");
  EXPECT_EQ(budget.used(), 0u);
  // Taken by others, it refuses even a small rendering, which succeeds once it is free again.
  ASSERT_TRUE(budget.take(4u << 20));
  EXPECT_EQ(render_error(jinja::Template("{{ 'a' ~ 'b' }}"), &budget).kind, TemplateError::Kind::kBusy);
  budget.give(4u << 20);
  EXPECT_EQ(jinja::Template("{{ 'a' ~ 'b' }}").render(kNoVariables, &budget), "ab");

}

TEST(JinjaLimits, TurnsOneAtATimeOnePerClient) {
  using Turn = jinja::RenderBudget::Turn;
  jinja::RenderBudget budget(4u << 20, std::chrono::milliseconds(50));
  ASSERT_EQ(budget.begin("10.0.0.1"), Turn::kGot);
  EXPECT_EQ(budget.begin("10.0.0.1"), Turn::kClientHasOne);  // its second, at once
  budget.end();
  ASSERT_EQ(budget.begin("10.0.0.2"), Turn::kGot);           // the turn is free again
  EXPECT_EQ(budget.begin("10.0.0.1"), Turn::kWaitedTooLong);  // another's waits for it, 50 ms
  budget.end();
}

TEST(JinjaLimits, AStoppedBudgetEndsTheRenderingsWaiting) {
  // A server that stops (potop serve: SIGTERM) waits for no template: the renderings waiting for
  // their turn give up at once, however long they would wait, and the running one at its next step.
  using Turn = jinja::RenderBudget::Turn;
  jinja::RenderBudget budget(4u << 20, std::chrono::hours(1));
  ASSERT_EQ(budget.begin("a"), Turn::kGot);
  Turn waited = Turn::kGot;
  std::thread waiting([&] { waited = budget.begin("b"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  budget.stop();
  waiting.join();
  EXPECT_EQ(waited, Turn::kStopped);
  const TemplateError e = render_error(jinja::Template("{% for i in range(100) %}{{ i }}{% endfor %}"), &budget);
  EXPECT_EQ(e.kind, TemplateError::Kind::kBusy);
  EXPECT_THAT(e.what(), HasSubstr("the server is stopping"));
  budget.end();
  budget.start();
  EXPECT_EQ(jinja::Template("{{ 'a' }}").render(kNoVariables, &budget), "a");
}

TEST(JinjaLimits, ARenderingStopsAfterTwoSeconds) {
  // Each turn compares the 8 MiB text with itself ten times and builds nothing: 10,000 comparisons
  // of 8 MiB, well within the steps and the bytes, take longer than 2 s.
  std::string compare = "s == s";
  for (int i = 0; i < 9; ++i) compare += " and s == s";
  const jinja::Template t(kEightMiB + "{% set s = ns.s %}{% for i in range(1000) %}{% if " + compare +
                          " %}{% endif %}{% endfor %}done");
  const TemplateError e = render_error(t);
  EXPECT_EQ(e.kind, TemplateError::Kind::kUnsupported);
  EXPECT_THAT(e.what(), HasSubstr("rendering for more than 2 s"));
}

}  // namespace
}  // namespace potop::test_jinja_limits
