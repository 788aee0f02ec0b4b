#include "cli/commands.h"

#include <memory>
#include <utility>
#include <vector>

namespace potop::cli {

Run subcommand_group(CLI::App* group, std::initializer_list<AddSubcommand> adders) {
  group->require_subcommand(1);
  auto runs = std::make_shared<std::vector<std::pair<CLI::App*, Run>>>();
  for (AddSubcommand add : adders) {
    Run run;
    add(group, run);
    runs->emplace_back(group->get_subcommands({}).back(), std::move(run));
  }
  return [runs]() {
    for (auto& [sub, run] : *runs)
      if (sub->parsed()) return run();
    return 1;
  };
}

}  // namespace potop::cli
