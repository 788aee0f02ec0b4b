#include "cli/flags.h"

#include <type_traits>

#include "core/error.h"

namespace potop::cli {

namespace {

// The help's type column names the choices: "--norm pre|post" rather than "--norm TEXT".
std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : "|") + n;
  return joined;
}

}  // namespace

CLI::Option* add_choice(CLI::App* cmd, const std::string& flag, const Choice& choice, const std::string& help) {
  return cmd
      ->add_option_function<std::string>(
          flag,
          [choice, flag](const std::string& value) {
            if (!choice.set(value)) throw Error(flag + ": " + choice.mismatch(value));
          },
          help)
      ->type_name(join_names(choice.names))
      ->default_str(choice.get());
}

void add_field(CLI::App* cmd, const Field& f) {
  const std::string flag = "--" + f.name;
  std::visit(
      [&](const auto& target) {
        using P = std::decay_t<decltype(target)>;
        if constexpr (std::is_same_v<P, Choice>) {
          add_choice(cmd, flag, target, f.help);
        } else if constexpr (std::is_same_v<P, bool*>) {
          // Two plain flags rather than CLI11's "--x,!--no-x", whose help reads "{false}".
          bool* value = target;
          if (*value) {
            cmd->add_flag_callback(flag, [value] { *value = true; }, f.help + " (on by default)");
            cmd->add_flag_callback("--no-" + f.name, [value] { *value = false; }, "turn " + flag + " off");
          } else {
            cmd->add_flag_callback(flag, [value] { *value = true; }, f.help);
          }
        } else {
          cmd->add_option(flag, *target, f.help)->capture_default_str();
        }
      },
      f.target);
}

bool field_given(const CLI::App* cmd, const Field& f) {
  if (cmd->count("--" + f.name) > 0) return true;
  const CLI::Option* off = cmd->get_option_no_throw("--no-" + f.name);
  return off && off->count() > 0;
}

}  // namespace potop::cli
