#include "gates/pipeline/safety/interruption.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace fabgate::pipeline {
namespace {

constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<int> received{0};
std::atomic<int> first_signal{0};
struct sigaction previous[3];

// The line naming `fabgate recover`, formatted by the controller before any signal can need it:
// the handler may only copy bytes it finds ready. Its length is published last (release), so a
// handler that sees a length sees the bytes; 0 means no line.
constexpr std::size_t kRecoverLineCapacity = 8192;
char recover_line[kRecoverLineCapacity];
std::atomic<std::size_t> recover_line_length{0};
std::string recover_command_text;  // the controller's copy (main thread only)

// Async-signal-safe: atomics and write(2) only.
void say(const char* text, std::size_t length) {
  ssize_t ignored = ::write(STDERR_FILENO, text, length);
  (void)ignored;
}
void say(const char* text) { say(text, std::strlen(text)); }
void say_recover_line() {
  if (std::size_t length = recover_line_length.load(std::memory_order_acquire); length > 0)
    say(recover_line, length);
}

void on_signal(int signal_number) {
  // write(2) may set errno; the thread this handler interrupted must find its own errno.
  const int saved_errno = errno;
  int expected = 0;
  first_signal.compare_exchange_strong(expected, signal_number);
  int now = ++received;
  if (now == 1) {
    say("\nfabgate: signal received: stopping the run; a change already sent is rolled back "
        "and its restore verified (a second signal skips the verification, a third kills "
        "fabgate)\n");
    say_recover_line();
  } else if (now == 2) {
    say("\nfabgate: second signal: the rollback steps still go out, then the evidence is "
        "sealed without verifying the restore (exit 5); a third signal kills fabgate at once\n");
    say_recover_line();
    // A third signal takes the default action: the operator insists, the journal remains.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    for (int handled : kHandled) ::sigaction(handled, &fallback, nullptr);
  }
  errno = saved_errno;
}

}  // namespace

void Interruption::ignore_broken_pipes() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

void Interruption::set_recover_command(const std::string& command) {
  recover_line_length.store(0, std::memory_order_release);
  recover_command_text = command;
  if (command.empty()) return;
  const std::string line =
      "fabgate: if fabgate is killed before this run ends, finish it with: " + command + "\n";
  if (line.size() > kRecoverLineCapacity) return;  // a path this long is named at the end only
  std::memcpy(recover_line, line.data(), line.size());
  recover_line_length.store(line.size(), std::memory_order_release);
}

std::string Interruption::recover_command() { return recover_command_text; }

Interruption::Installed::Installed() {
  Interruption::reset();
  Interruption::set_recover_command("");
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // Restarting keeps the libraries' blocking calls (libssh, libcurl, gRPC) from failing with
  // EINTR: every one of them has its own deadline, and the controller polls the count.
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) ::sigaction(kHandled[i], &action, &previous[i]);
}

Interruption::Installed::~Installed() {
  for (int i = 0; i < 3; ++i) ::sigaction(kHandled[i], &previous[i], nullptr);
  Interruption::set_recover_command("");
}

int Interruption::count() { return received.load(); }

std::string Interruption::first_name() {
  int signal_number = first_signal.load();
  return signal_number == 0 ? std::string() : signal_name(signal_number);
}

bool Interruption::sleep_unless(Duration wait, int signals_allowed) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (count() > signals_allowed) return false;
    auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        left, std::chrono::milliseconds(20)));
  }
}

void Interruption::simulate(int signal_number) {
  int expected = 0;
  first_signal.compare_exchange_strong(expected, signal_number);
  ++received;
}

void Interruption::reset() {
  received = 0;
  first_signal = 0;
}

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal_number);
  }
}

}  // namespace fabgate::pipeline
