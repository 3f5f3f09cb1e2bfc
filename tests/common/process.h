#pragma once

// Small helpers for tests that drive real programs (git, the built fabgate binary) in
// temporary folders. Header-only so any test target can use them without linking.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace fabgate::testing {

// A temporary folder removed with everything in it when the test ends, even on failure.
class TempDir {
 public:
  TempDir() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("fabgate-test-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line, capturing stdout and stderr. Tests build the command lines
// themselves from paths they control.
inline CommandOutput run_shell(const std::string& command_line) {
  CommandOutput result;
  std::string wrapped = "( " + command_line + " ) 2>&1 </dev/null";
  FILE* pipe = ::popen(wrapped.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// A real git repository in a temporary folder, committed with the git CLI.
class GitRepo {
 public:
  GitRepo() {
    run("git init -q -b main . && git config user.name 'Test Author' && "
        "git config user.email author@example.net && git config commit.gpgsign false");
  }
  const std::filesystem::path& path() const { return dir_.path(); }
  void write(const std::string& relative, const std::string& content) {
    write_file(dir_.path() / relative, content);
  }
  CommandOutput run(const std::string& command) {
    return run_shell("cd " + shell_quoted(dir_.path().string()) + " && " + command);
  }
  void commit_all(const std::string& message) {
    run("git add -A && git commit -q -m " + shell_quoted(message));
  }
  std::string head() { 
    auto out = run("git rev-parse HEAD").output;
    while (!out.empty() && (out.back() == '\n')) out.pop_back();
    return out;
  }

 private:
  TempDir dir_;
};

}  // namespace fabgate::testing
