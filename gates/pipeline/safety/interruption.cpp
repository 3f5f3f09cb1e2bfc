#include "gates/pipeline/safety/interruption.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace fabgate::pipeline {
namespace {

constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<int> received{0};
std::atomic<int> first_signal{0};
struct sigaction previous[3];

// Async-signal-safe: atomics and write(2) only.
void say(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_signal(int signal_number) {
  int expected = 0;
  first_signal.compare_exchange_strong(expected, signal_number);
  int now = ++received;
  if (now == 1) {
    say("\nfabgate: signal received: stopping the run; a change already sent is rolled back "
        "and its restore verified (a second signal abandons the rollback)\n");
  } else if (now == 2) {
    say("\nfabgate: second signal: no further rollback step is sent; sealing the evidence "
        "(exit 5, then run fabgate recover)\n");
    // A third signal takes the default action: the operator insists, the journal remains.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    for (int handled : kHandled) ::sigaction(handled, &fallback, nullptr);
  }
}

}  // namespace

Interruption::Installed::Installed() {
  Interruption::reset();
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
