// fabgate-gnmid: a gNMI target for a Linux/FRR node (see docs/gnmi.md). Parse and dispatch only.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <utility>

#include "adapters/core/build_info.h"
#include "adapters/gnmi/target/login_check.h"
#include "adapters/gnmi/target/server.h"
#include "adapters/gnmi/target/synthetic_routes.h"

namespace {

int run(int argc, char** argv) {
  using fabgate::gnmi::target::TargetOptions;
  TargetOptions options;
  CLI::App app{"fabgate-gnmid: gNMI target for a Linux/FRR node"};
  bool show_version = false;
  std::string vtysh = "vtysh";
  std::string credentials_env;
  int debug_delay_ms = 0;
  app.add_flag("--version", show_version, "Print version and build commit");
  app.add_option("--listen", options.listen, "ADDR:PORT (port 0: any free port) or unix:PATH");
  app.add_option("--tls-cert", options.tls_cert_file, "Server certificate (PEM)");
  app.add_option("--tls-key", options.tls_key_file, "Server private key (PEM)");
  app.add_option("--tls-client-ca", options.tls_client_ca_file,
                 "Require client certificates signed by this CA (PEM); needs TLS (refused with "
                 "--insecure-plaintext, where it would authenticate nobody)");
  app.add_flag("--insecure-plaintext", options.insecure_plaintext,
               "Serve without TLS (must be asked for explicitly)");
  app.add_option("--credentials-env", credentials_env,
                 "Require username/password metadata equal to $PREFIX_USERNAME/$PREFIX_PASSWORD "
                 "(needs TLS; refused unless both are set and non-empty)");
  app.add_flag("--no-auth", options.no_auth,
               "Serve every client without authentication (lab and tests only; logged at "
               "startup). Without it, --credentials-env or --tls-client-ca is required");
  app.add_flag("--lab-insecure-plaintext-credentials", options.lab_insecure_plaintext_credentials,
               "Accept --credentials-env over --insecure-plaintext, in clear text (lab only; "
               "logged at startup)");
  app.add_option("--max-streams", options.max_streams,
                 "Subscribe streams served at once; more are refused with RESOURCE_EXHAUSTED")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  int poll_idle_timeout_s = static_cast<int>(options.poll_idle_timeout.count() / 1000);
  app.add_option("--poll-idle-timeout", poll_idle_timeout_s,
                 "Seconds a POLL subscription may go without a poll request before it is ended "
                 "(0: never)")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  app.add_option("--hostname", options.node.hostname, "Hostname to report (default: the system's)");
  app.add_option("--vtysh", vtysh, "vtysh command, split on spaces (e.g. 'vtysh -N leaf1')");
  app.add_option("--ip", options.node.ip, "iproute2 'ip' program used by Set");
  app.add_option("--lldp-socket", options.node.lldp_socket,
                 "lldpd's control socket: serve /lldp from it (without it /lldp is not served)");
  app.add_option("--lldpcli", options.node.lldpcli, "lldpcli program (default: lldpcli)");
  app.add_option("--frr-run-dir", options.node.frr_run_dir,
                 "FRR's pid files; FRR's version is asked again whenever vtysh or a daemon there "
                 "changed (with 'vtysh -N NAME': NAME's folder under it; empty: ask every time)")
      ->capture_default_str();
  // Hidden (empty group): lets tests make every RPC slow to exercise client deadlines.
  app.add_option("--debug-delay-ms", debug_delay_ms)->group("");
  // Hidden: a target that implements only some Subscribe modes (the others: UNIMPLEMENTED).
  app.add_option("--debug-unimplemented-mode", options.unimplemented_modes)
      ->check(CLI::IsMember({"STREAM", "POLL", "ONCE"}))
      ->group("");
  // Hidden: serves N synthetic IPv4 routes as the main table (a real switch's AFT size).
  app.add_option("--debug-synthetic-ipv4-routes", options.debug_synthetic_ipv4_routes)
      ->check(CLI::Range(std::size_t{0}, fabgate::gnmi::target::kMaxSyntheticRoutes))
      ->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (show_version) {
    std::printf("fabgate-gnmid %s (commit %s)\n", fabgate::tool_version(), fabgate::build_commit());
    return 0;
  }
  options.node.vtysh.clear();
  std::istringstream words(vtysh);
  for (std::string word; words >> word;) options.node.vtysh.push_back(word);
  options.debug_delay = fabgate::Duration(debug_delay_ms);
  options.poll_idle_timeout = fabgate::Duration(std::int64_t{poll_idle_timeout_s} * 1000);
  if (!credentials_env.empty()) {
    auto login = fabgate::gnmi::target::expected_login_from_environment(credentials_env);
    if (!login) {
      std::fprintf(stderr, "fabgate-gnmid: error: %s\n", login.error().message.c_str());
      return 2;
    }
    options.expected_login = std::move(*login);
    // Held in memory from here on: the programs fabgate-gnmid runs (vtysh, ip, lldpcli) must
    // not inherit the credentials. Still one thread here, so unsetenv is safe.
    ::unsetenv((credentials_env + "_USERNAME").c_str());
    ::unsetenv((credentials_env + "_PASSWORD").c_str());
  }
  return fabgate::gnmi::target::run_target(options);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabgate-gnmid: error: internal: %s\n", e.what());
    return 1;
  }
}
