// fabgate-probe watch: parse flags, run the continuous probe from adapters/flows until SIGTERM,
// SIGINT or --max-duration, print one JSON document. See docs/lab.md.

#include "cmd/fabgate-probe/subcommand.h"

#include <cstdio>
#include <memory>
#include <string>

#include "adapters/core/duration.h"
#include "adapters/flows/priority.h"
#include "adapters/flows/report_json.h"
#include "adapters/flows/watch.h"
#include "cmd/fabgate-probe/stop_signal.h"

namespace fabgate::probe {

namespace {

struct WatchFlags {
  std::string to;
  int port = 0;
  int count = 16;
  std::string interval = "20ms";
  std::string max_duration = "10m";
  std::string reply_timeout = "1s";
  std::string max_interruption = "0ms";
  std::string priority = "realtime";
};

ProbeExit run_watch(const WatchFlags& flags) {
  std::vector<std::string> problems;
  auto parse = [&](const std::string& text, const char* name) {
    auto parsed = parse_duration(text);
    if (!parsed)
      problems.push_back(std::string(name) + " '" + text + "' is not a duration (100ms, 5s, 1m)");
    return parsed.value_or(Duration(0));
  };
  flows::WatchOptions options;
  options.target = flags.to;
  options.port = static_cast<std::uint16_t>(flags.port);
  if (flags.port < 1 || flags.port > 65535) problems.push_back("--port must be 1-65535");
  options.count = flags.count;
  options.interval = parse(flags.interval, "--interval");
  options.max_duration = parse(flags.max_duration, "--max-duration");
  options.reply_timeout = parse(flags.reply_timeout, "--reply-timeout");
  options.max_interruption = parse(flags.max_interruption, "--max-interruption");
  if (flags.priority != "realtime" && flags.priority != "normal")
    problems.push_back("--priority must be realtime or normal");
  if (problems.empty()) problems = flows::validate(options);
  if (!problems.empty()) {
    for (const auto& problem : problems)
      std::fprintf(stderr, "fabgate-probe: watch: %s\n", problem.c_str());
    return ProbeExit::invalid_usage;
  }
  install_stop_handlers();
  // Before any thread starts, so the whole sampler runs at it (priority.h).
  const std::string priority =
      flags.priority == "realtime" ? flows::request_realtime_priority() : "normal (asked for)";
  const std::string endpoint = options.target + ":" + std::to_string(options.port);
  // The readiness line: fabgate waits for it before the first step and refuses the change
  // when it does not come (docs/lab.md).
  auto announce = [&] {
    std::fprintf(stderr, "fabgate-probe: watch sampling %d flows to %s\n", options.count,
                 endpoint.c_str());
    std::fflush(stderr);
  };
  auto report = flows::run_watch(options, stop_requested, announce);
  if (!report) {
    std::printf("%s\n", flows::no_evidence_json("watch", report.error().message).dump(2).c_str());
    return ProbeExit::no_evidence;
  }
  if (!report->sampling_since) {
    int unanswered = 0;
    for (const auto& flow : report->flows) unanswered += flow.received == 0;
    std::fprintf(stderr,
                 "fabgate-probe: watch: ended before every flow was answered (%d of %d flows to "
                 "%s never answered)\n",
                 unanswered, options.count, endpoint.c_str());
  }
  auto document = flows::to_json(*report);
  document["sampler_priority"] = priority;
  std::printf("%s\n", document.dump(2).c_str());
  switch (report->verdict) {
    case flows::Verdict::pass:
      return ProbeExit::pass;
    case flows::Verdict::fail:
      return ProbeExit::fail;
    case flows::Verdict::no_evidence:
      return ProbeExit::no_evidence;
  }
  return ProbeExit::no_evidence;
}

}  // namespace

Runner define_watch(CLI::App& command) {
  auto flags = std::make_shared<WatchFlags>();
  command.add_option("--to", flags->to, "The flows responder's IPv4 address")->required();
  command.add_option("--port", flags->port, "The responder's port")->required();
  command.add_option("--count", flags->count, "Number of distinct flows, 1-256")
      ->capture_default_str();
  command
      .add_option(
          "--interval", flags->interval,
          "Resolution of every interruption figure, 10ms-100ms (each flow is sampled 3 times "
          "per interval; an echo slower than one interval is not an answer)")
      ->capture_default_str();
  command.add_option("--max-duration", flags->max_duration, "Stop by itself after this long")
      ->capture_default_str();
  command
      .add_option("--reply-timeout", flags->reply_timeout, "A sample unanswered this long is lost")
      ->capture_default_str();
  command
      .add_option("--max-interruption", flags->max_interruption,
                  "Fail when a flow's longest interruption exceeds this")
      ->capture_default_str();
  command
      .add_option("--priority", flags->priority,
                  "realtime: run the sampler at SCHED_RR 40 when the process may (root or "
                  "CAP_SYS_NICE), so a busy host costs the figures as little as it can; normal: "
                  "as started. The report's sampler_priority says which it got")
      ->capture_default_str();
  return [flags] { return run_watch(*flags); };
}

}  // namespace fabgate::probe
