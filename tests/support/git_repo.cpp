#include "tests/support/git_repo.h"

#include <filesystem>

namespace fabgate::testing {

GitRepo::GitRepo() : dir_("fabgate-git") {
  run("git init -q -b main . && git config user.name 'Test Author' && "
      "git config user.email author@example.net && git config commit.gpgsign false");
}

void GitRepo::write(const std::string& relative, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(dir_.file(relative)).parent_path());
  write_file(dir_.file(relative), content);
}

CommandOutput GitRepo::run(const std::string& command) {
  return run_shell("cd " + shell_quoted(dir_.path()) + " && " + command);
}

void GitRepo::commit_all(const std::string& message) {
  run("git add -A && git commit -q -m " + shell_quoted(message));
}

std::string GitRepo::head() {
  auto out = run("git rev-parse HEAD").output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace fabgate::testing
