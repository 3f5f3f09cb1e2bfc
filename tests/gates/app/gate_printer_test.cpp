// The gate lines of plan, apply, rehearse and recover: a gate running longer than two seconds
// shows that it runs and what it waits for (a live line on a terminal, a plain line every so
// often in a log), and a blocking gate's repeated causes are printed once.

#include "gates/app/gate_printer.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace fabgate::app {
namespace {

using namespace std::chrono_literals;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// A pseudo-terminal: the printer writes to its slave side as to a user's terminal, the test
// reads what the terminal received from the master side.
class PseudoTerminal {
 public:
  PseudoTerminal() {
    int master = -1, slave = -1;
    if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return;
    master_ = master;
    ::fcntl(master_, F_SETFL, ::fcntl(master_, F_GETFL) | O_NONBLOCK);
    slave_.reset(::fdopen(slave, "w"));
  }
  ~PseudoTerminal() {
    slave_.reset();
    if (master_ >= 0) ::close(master_);
  }
  bool ok() const { return master_ >= 0 && slave_; }
  std::FILE* slave() const { return slave_.get(); }
  // Everything the terminal received since the last call.
  std::string received() {
    std::string text;
    char buffer[4096];
    while (::poll(std::array<pollfd, 1>{pollfd{master_, POLLIN, 0}}.data(), 1, 50) > 0) {
      ssize_t n = ::read(master_, buffer, sizeof buffer);
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
  }

 private:
  int master_ = -1;
  File slave_;
};

pipeline::GateRecord record(const std::string& name, pipeline::Verdict verdict,
                            std::chrono::milliseconds took, std::string summary) {
  pipeline::GateRecord gate;
  gate.name = name;
  gate.verdict = verdict;
  gate.duration = Duration{took.count()};
  gate.summary = std::move(summary);
  return gate;
}

std::string contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  return text;
}

TEST(GatePrinter, OnATerminalASlowGateShowsALiveLineWithElapsedTimeAndProgress) {
  // Given a terminal and a snapshot gate that takes 2.6 s, with 6 of 8 devices done, then
  // nothing shows for the first two seconds, then one line is redrawn in place (carriage
  // return, no newline) with the gate, its elapsed time and "6/8 devices", and the result line
  // replaces it when the gate ends.
  ::setenv("TERM", "xterm", 1);
  ::setenv("NO_COLOR", "1", 1);
  PseudoTerminal terminal;
  if (!terminal.ok()) GTEST_SKIP() << "no pseudo-terminal here (openpty failed)";
  Redactor redactor;
  File err(std::tmpfile());
  Console console(terminal.slave(), err.get(), false, redactor);
  ASSERT_TRUE(console.terminal());
  GatePrinter printer(console);
  printer.gate_started("snapshot-pre");
  printer.progress(0, 8, "devices");
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(terminal.received(), "") << "a gate shorter than 2 s shows nothing while it runs";
  printer.progress(6, 8, "devices");
  std::this_thread::sleep_for(1100ms);
  std::string live = terminal.received();
  printer.gate_finished(
      record("snapshot-pre", pipeline::Verdict::pass, 2600ms, "8 devices, every source collected"));
  std::string end = terminal.received();

  EXPECT_NE(live.find("\r  snapshot-pre 2."), std::string::npos) << live;
  EXPECT_NE(live.find(" s, 6/8 devices\033[K"), std::string::npos) << live;
  EXPECT_EQ(live.find('\n'), std::string::npos) << "the live line is redrawn, not repeated";
  EXPECT_EQ(end.rfind("\r\033[K", 0), 0u) << "the live line is cleared first: " << end;
  EXPECT_NE(end.find("snapshot-pre          2.60s  pass  8 devices, every source collected"),
            std::string::npos)
      << end;
}

TEST(GatePrinter, WithoutATerminalASlowGatePrintsAPlainLineEveryInterval) {
  // Given a log file (no terminal) and a gate that runs 2.5 s with plain lines every second,
  // then two plain lines say it still runs and what it waits for, with no control characters.
  Redactor redactor;
  File out(std::tmpfile()), err(std::tmpfile());
  Console console(out.get(), err.get(), false, redactor);
  ASSERT_FALSE(console.terminal());
  ProgressTiming timing;
  timing.plain = 1000ms;
  {
    GatePrinter printer(console, timing);
    printer.gate_started("acceptance");
    printer.progress(1, 3, "probes");
    std::this_thread::sleep_for(2500ms);
    printer.gate_finished(record("acceptance", pipeline::Verdict::pass, 2500ms, "3/3 passed"));
  }
  std::string log = contents(out.get());
  EXPECT_NE(log.find("  acceptance still running after 1 s, 1/3 probes\n"), std::string::npos)
      << log;
  EXPECT_NE(log.find("  acceptance still running after 2 s, 1/3 probes\n"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("after 3 s"), std::string::npos) << log;
  EXPECT_EQ(log.find('\r'), std::string::npos) << log;
  EXPECT_EQ(log.find('\033'), std::string::npos) << log;
  EXPECT_NE(log.find("acceptance            2.50s  pass  3/3 passed"), std::string::npos) << log;
}

TEST(GatePrinter, ABlockingGateReportsOneCauseOnce) {
  // Given a snapshot gate with no evidence because the read key file is missing on 52 devices,
  // then its details are one line with the count and the first names, not 52 lines.
  Redactor redactor;
  File out(std::tmpfile()), err(std::tmpfile());
  Console console(out.get(), err.get(), false, redactor);
  auto gate =
      record("snapshot-pre", pipeline::Verdict::no_evidence, 300ms, "52 sources without evidence");
  for (int n = 1; n <= 52; ++n)
    gate.details.push_back("leaf" + std::to_string(n) +
                           ": identity: ssh: key file /keys/ro not found");
  {
    GatePrinter printer(console);
    printer.gate_finished(gate);
  }
  std::string log = contents(out.get());
  EXPECT_NE(log.find("      leaf1: identity: ssh: key file /keys/ro not found (same on 51 more "
                     "devices: leaf2, leaf3, leaf4, …)\n"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("leaf2: identity"), std::string::npos) << log;
  EXPECT_EQ(log.find("more in the report"), std::string::npos) << log;
}

}  // namespace
}  // namespace fabgate::app
