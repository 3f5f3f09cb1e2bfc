#include "cmd/fabgate/complete.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gates/app/usage.h"

namespace fabgate::cli {
namespace {

void print_sorted(std::vector<std::string> words) {
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  for (const auto& word : words) std::printf("%s\n", word.c_str());
}

// Every flag a command (or the top level, for "") accepts, nested commands included.
std::vector<std::string> flags_of(const CLI::App& app, const std::string& command) {
  std::vector<std::string> flags;
  for (const auto& option : app::common_option_help()) flags.emplace_back(option.flag);
  flags.emplace_back("--help");
  const CLI::App* target = &app;
  if (!command.empty()) {
    target = nullptr;
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == command) target = sub;
    if (!target) return flags;
  } else {
    flags.emplace_back("--version");
  }
  std::vector<const CLI::App*> pending = {target};
  while (!pending.empty()) {
    const CLI::App* at = pending.back();
    pending.pop_back();
    for (const auto* option : at->get_options())
      for (const auto& name : option->get_lnames()) flags.push_back("--" + name);
    for (const auto* nested : at->get_subcommands({})) pending.push_back(nested);
  }
  return flags;
}

}  // namespace

void define_complete(CLI::App& app, const app::CommonOptions& common,
                     std::map<const CLI::App*, Runner>& runners) {
  CLI::App* complete = app.add_subcommand("__complete", "");
  complete->group("");  // hidden from --help
  auto what = std::make_shared<std::string>();
  auto command = std::make_shared<std::string>();
  complete->add_option("what", *what)->required();
  complete->add_option("command", *command);
  runners[complete] = [&app, &common, what, command](app::Console&) -> Result<ExitCode> {
    if (*what == "commands") {
      std::vector<std::string> names;
      for (const auto* sub : app.get_subcommands({}))
        if (!sub->get_group().empty()) names.push_back(sub->get_name());
      print_sorted(names);
    } else if (*what == "flags") {
      print_sorted(flags_of(app, *command));
    } else if (*what == "changes") {
      print_sorted(app::change_ids_at(common));
    }
    return ExitCode::accepted;
  };
}

}  // namespace fabgate::cli
