// fabgate-probe flows: parse flags, run the flow probe or the responder from adapters/flows,
// print one JSON document. See docs/lab.md for the fields and docs/probes.md for the message
// layout and the verdict rule.

#include "cmd/fabgate-probe/subcommand.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "adapters/core/duration.h"
#include "adapters/core/text.h"
#include "adapters/flows/flow_probe.h"
#include "adapters/flows/priority.h"
#include "adapters/flows/report_json.h"
#include "adapters/flows/responder.h"
#include "cmd/fabgate-probe/stop_signal.h"

namespace fabgate::probe {

namespace {

struct FlowsFlags {
  bool respond = false;
  std::string listen;
  std::string to;
  int port = 0;
  int count = 16;
  std::string protocol = "udp";
  std::string timeout = "5s";
  int packets = 5;
  std::string spacing = "20ms";
  std::string reply_timeout = "1s";
  std::string duration = "60s";
  std::string pid_file;
  int size = 0;
  std::string from;
};

void print(const nlohmann::ordered_json& document) {
  std::printf("%s\n", document.dump(2).c_str());
}

ProbeExit usage_error(const std::vector<std::string>& problems) {
  for (const auto& problem : problems)
    std::fprintf(stderr, "fabgate-probe: flows: %s\n", problem.c_str());
  return ProbeExit::invalid_usage;
}

std::optional<Duration> duration_flag(const std::string& text, const char* name,
                                      std::vector<std::string>& problems) {
  auto parsed = parse_duration(text);
  if (!parsed)
    problems.push_back(std::string(name) + " '" + text + "' is not a duration (500ms, 5s, 1m)");
  return parsed;
}

ProbeExit verdict_exit(flows::Verdict verdict) {
  switch (verdict) {
    case flows::Verdict::pass:
      return ProbeExit::pass;
    case flows::Verdict::fail:
      return ProbeExit::fail;
    case flows::Verdict::no_evidence:
      return ProbeExit::no_evidence;
  }
  return ProbeExit::no_evidence;
}

ProbeExit respond(const FlowsFlags& flags) {
  std::vector<std::string> problems;
  auto lifetime = duration_flag(flags.duration, "--duration", problems);
  if (flags.listen.empty()) problems.push_back("--respond needs --listen ADDRESS");
  if (flags.port < 1 || flags.port > 65535) problems.push_back("--port must be 1-65535");
  if (lifetime && (*lifetime <= Duration(0) || *lifetime > std::chrono::hours(6))) {
    problems.push_back("--duration must be more than 0 and at most 6h");
  }
  if (!problems.empty()) return usage_error(problems);

  flows::ResponderOptions options{flags.listen, static_cast<std::uint16_t>(flags.port), *lifetime};
  auto responder = flows::Responder::open(options);
  if (!responder) {
    print(flows::no_evidence_json("flows-responder", responder.error().message));
    return ProbeExit::no_evidence;
  }
  install_stop_handlers();
  // An echo held back by the host's CPU reads as the path's delay at the other end (priority.h).
  const std::string priority = flows::request_realtime_priority();
  if (!flags.pid_file.empty()) std::ofstream(flags.pid_file) << ::getpid() << "\n";
  // The readiness line: whoever started the responder waits for it before probing.
  std::fprintf(stderr, "fabgate-probe: flows responder listening on %s\n",
               responder->endpoint().c_str());
  std::fflush(stderr);
  auto stats = responder->serve(stop_requested);
  if (!flags.pid_file.empty()) std::remove(flags.pid_file.c_str());
  auto document = flows::to_json(stats, responder->endpoint());
  document["priority"] = priority;
  print(document);
  return ProbeExit::pass;
}

ProbeExit probe(const FlowsFlags& flags) {
  std::vector<std::string> problems;
  auto timeout = duration_flag(flags.timeout, "--timeout", problems);
  auto spacing = duration_flag(flags.spacing, "--spacing", problems);
  auto reply_timeout = duration_flag(flags.reply_timeout, "--reply-timeout", problems);
  auto protocol = flows::parse_protocol(flags.protocol);
  if (!protocol) problems.push_back("--proto must be udp, tcp or icmp");
  if (flags.to.empty()) problems.push_back("--to ADDRESS is required (or --respond)");
  // The far host's kernel answers ICMP echo requests: icmp has no port, and ignores one given.
  const bool icmp = protocol == flows::Protocol::icmp;
  if (!icmp && (flags.port < 1 || flags.port > 65535)) problems.push_back("--port must be 1-65535");
  if (!problems.empty()) return usage_error(problems);

  flows::FlowProbeOptions options;
  options.target = flags.to;
  options.port = icmp ? 0 : static_cast<std::uint16_t>(flags.port);
  options.count = flags.count;
  options.protocol = *protocol;
  options.timeout = *timeout;
  options.packets_per_flow = flags.packets;
  options.spacing = *spacing;
  options.reply_timeout = *reply_timeout;
  options.size = flags.size;
  options.source = flags.from;
  problems = flows::validate(options);
  if (!problems.empty()) return usage_error(problems);

  auto report = flows::run_flow_probe(options);
  if (!report) {
    print(flows::no_evidence_json("flows", report.error().message));
    return ProbeExit::no_evidence;
  }
  print(flows::to_json(*report));
  return verdict_exit(report->verdict);
}

}  // namespace

Runner define_flows(CLI::App& command) {
  auto flags = std::make_shared<FlowsFlags>();
  command.add_flag("--respond", flags->respond, "Run the echo responder instead of the probe");
  command.add_option("--listen", flags->listen, "Responder: IPv4 address to listen on");
  command.add_option("--to", flags->to, "Probe: the responder's IPv4 address");
  command.add_option("--port", flags->port,
                     "TCP and UDP port of the responder (required but for --proto icmp, which "
                     "ignores it)");
  command.add_option("--count", flags->count, "Number of distinct flows (source ports), 1-1024")
      ->capture_default_str();
  command
      .add_option("--proto", flags->protocol,
                  "udp, tcp or icmp (echo requests the far host's kernel answers: no responder)")
      ->capture_default_str();
  command.add_option("--timeout", flags->timeout, "Hard deadline for the whole probe")
      ->capture_default_str();
  command.add_option("--packets", flags->packets, "Packets per flow, 1-1000")
      ->capture_default_str();
  command.add_option("--spacing", flags->spacing, "Time between packets of one flow")
      ->capture_default_str();
  command
      .add_option("--reply-timeout", flags->reply_timeout, "A packet unanswered this long is lost")
      ->capture_default_str();
  command.add_option("--size", flags->size,
                     "udp or icmp payload bytes per packet, sent with don't-fragment set "
                     "(16-65507); default 64 bytes without don't-fragment");
  command.add_option("--from", flags->from, "Probe: IPv4 address to send from (e.g. overlay)");
  command.add_option("--duration", flags->duration, "Responder: exit after this long")
      ->capture_default_str();
  command.add_option("--pid-file", flags->pid_file, "Responder: write its pid here while it runs");
  return [flags] { return flags->respond ? respond(*flags) : probe(*flags); };
}

}  // namespace fabgate::probe
