// Subcommands of the potop binary. Each adds its flags to the app and returns the function
// that runs it after parsing.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <initializer_list>

namespace potop::cli {

using Run = std::function<int()>;

// A command of subcommands (potop bow train | attention, potop bert pretrain | fill, ...): each
// adder adds one subcommand to `group` and sets `run` to what runs it; the result runs the one
// that was parsed.
using AddSubcommand = void (*)(CLI::App* group, Run& run);
Run subcommand_group(CLI::App* group, std::initializer_list<AddSubcommand> adders);

Run add_train(CLI::App& app);
Run add_sample(CLI::App& app);
Run add_eval(CLI::App& app);
Run add_plot(CLI::App& app);
Run add_attention(CLI::App& app);
Run add_info(CLI::App& app);
Run add_tokenizer(CLI::App& app);
Run add_prepare(CLI::App& app);
Run add_serve(CLI::App& app);
Run add_bow(CLI::App& app);
Run add_translate(CLI::App& app);
Run add_word2vec(CLI::App& app);
Run add_classify(CLI::App& app);
Run add_bert(CLI::App& app);
Run add_export(CLI::App& app);
Run add_quantize(CLI::App& app);
Run add_import(CLI::App& app);
Run add_chat_template(CLI::App& app);

}  // namespace potop::cli
