#include "tests/examples/clos-lab/lab_harness.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace fabgate::testing::clos_lab {

const std::string kLabScript = FABGATE_SOURCE_DIR "/examples/clos-lab/lab";
const std::string kIntent = FABGATE_SOURCE_DIR "/examples/clos-lab/intent";
const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kProbe = FABGATE_BINARY_DIR "/cmd/fabgate-probe/fabgate-probe";
const std::string kGnmid = FABGATE_BINARY_DIR "/cmd/fabgate-gnmid/fabgate-gnmid";
const std::string kCoordinationPrefix = "/fabgate/clos-lab";
const std::string kCoordinationEndpoints =
    "http://10.255.0.1:2379,http://10.255.0.1:22379,http://10.255.0.1:32379";

std::optional<std::string> lab_unavailable() {
  if (::geteuid() != 0) return "needs root to build the lab's network namespaces";
  // etcd: `lab up` starts the cluster the lab intent claims its budgets in; etcdctl reads the
  // claims a test must not leave behind.
  for (const char* tool :
       {"/usr/lib/frr/bgpd", "/usr/lib/frr/bfdd", "/usr/sbin/sshd", "/usr/bin/jq", "/usr/bin/vtysh",
        "/usr/sbin/nft", "/usr/bin/etcd", "/usr/bin/etcdctl"})
    if (!std::filesystem::exists(tool))
      return std::string(tool) + " is not installed (scripts/bootstrap --tests installs it)";
  return std::nullopt;
}

Lab::Lab(std::string prefix, std::string dir) : prefix_(std::move(prefix)), dir_(std::move(dir)) {}

std::string Lab::env() const {
  return "FABGATE_LAB_DIR=" + dir_ + " FABGATE_LAB_PREFIX=" + prefix_ + " FABGATE_GNMID=" + kGnmid +
         " ";
}

CommandOutput Lab::run(const std::string& arguments) const {
  return run_shell(env() + kLabScript + " " + arguments);
}

nlohmann::json Lab::json(const std::string& arguments) const {
  auto out = run_shell(env() + kLabScript + " " + arguments + " 2>/dev/null");
  auto parsed = nlohmann::json::parse(out.output, nullptr, false);
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

std::string Lab::in_ns(const std::string& node) const {
  return "ip netns exec " + prefix_ + node + " ";
}

void Lab::install_probe() const {
  std::filesystem::create_directories(dir_ + "/bin");
  std::filesystem::copy_file(kProbe, dir_ + "/bin/fabgate-probe",
                             std::filesystem::copy_options::overwrite_existing);
}

void Lab::copy_intent_into(GitRepo& repo, TwinGate twin) const {
  repo.run("cp -r " + shell_quoted(kIntent) + "/. .");
  // The lab intent's `twin:` block is its last: cut from there to the end.
  if (twin == TwinGate::off) repo.run("sed -i '/^twin:/,$d' fabgate.yaml");
  repo.run("grep -rl /run/fabgate-lab . --include=*.yaml | xargs sed -i 's#/run/fabgate-lab#" +
           dir_ + "#g; s#/var/tmp/fabgate-lab-evidence#evidence#'");
  repo.write(".gitignore", "evidence/\n");
}

CommandOutput Lab::fabgate(GitRepo& repo, const std::string& arguments) const {
  return repo.run(in_ns("mgmt") + shell_quoted(kFabgate) + " " + arguments + " 2>&1");
}

std::optional<std::string> Lab::budget_claims() const {
  // Claims live at <prefix>/budgets/<budget>/<group>/claims/<run>, devices out of service at
  // <prefix>/service/out/<device> (docs/coordination.md).
  auto out = run_shell(in_ns("mgmt") + "etcdctl --endpoints=" + kCoordinationEndpoints +
                       " --command-timeout=5s get --prefix --keys-only " +
                       shell_quoted(kCoordinationPrefix + "/") + " 2>&1");
  if (out.exit_code != 0) return std::nullopt;
  std::istringstream lines(out.output);
  std::string claims;
  for (std::string key; std::getline(lines, key);)
    if ((key.starts_with(kCoordinationPrefix + "/budgets/") &&
         key.find("/claims/") != std::string::npos) ||
        key.starts_with(kCoordinationPrefix + "/service/out/"))
      claims += key + "\n";
  return claims;
}

void expect_no_budget_claims(const Lab& lab) {
  if (!std::filesystem::exists("/run/netns/" + lab.prefix() + "mgmt")) return;
  auto claims = lab.budget_claims();
  ASSERT_TRUE(claims.has_value()) << "the lab's etcd did not answer: " << lab.run("status").output;
  EXPECT_EQ(*claims, "") << "budget claims or devices out of service left in the lab's etcd: a "
                            "run ended without releasing its claims (exit 5 or killed, and no "
                            "`fabgate recover`), or a drain was accepted without its undrain";
}

FlowsResponder::FlowsResponder(const Lab& lab, const std::string& node, const std::string& listen,
                               int port, std::chrono::seconds lifetime)
    : pid_file_(lab.dir() + "/responder-" + node + "-" + std::to_string(port) + ".pid") {
  std::filesystem::remove(pid_file_);
  run_shell(lab.in_ns(node) + "sh -c " +
            shell_quoted(kProbe + " flows --respond --listen " + listen + " --port " +
                         std::to_string(port) + " --duration " + std::to_string(lifetime.count()) +
                         "s --pid-file " + pid_file_ + " >/dev/null 2>&1 &"));
  // The responder writes its pid file once it listens (its readiness signal).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(pid_file_);
    long pid = 0;
    if (in >> pid && pid > 0) {
      pid_ = pid;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

FlowsResponder::~FlowsResponder() {
  // Only while its pid file still names it: the responder removes the file when it exits, so
  // a pid reused since is never signalled.
  std::ifstream in(pid_file_);
  long pid = 0;
  if (pid_ > 0 && in >> pid && pid == pid_) ::kill(static_cast<pid_t>(pid_), SIGTERM);
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

std::filesystem::path evidence_of(const std::string& output) {
  // The summary's own line, which starts the line: a gate detail such as "no-evidence: not
  // run: ..." also holds "evidence: ".
  std::smatch match;
  static const std::regex line("(^|\n)evidence: +(\\S+)");
  if (std::regex_search(output, match, line)) return match[2].str();
  return {};
}

nlohmann::json control_plane(const nlohmann::json& snapshot) {
  nlohmann::json out = nlohmann::json::object();
  for (const char* device : {"spine1", "spine2", "leaf1", "leaf2"}) {
    const auto& facts = snapshot["devices"][device];
    nlohmann::json states = nlohmann::json::object();
    for (auto& [peer, value] : facts["bgp"]["peers"].items()) states[peer] = value["state"];
    out[device] = {{"routes", facts["routes"]["ipv4"]}, {"bgp", states}};
  }
  return out;
}

void SharedLabSuite::bring_up(const Lab& lab, const std::string& commit_message) {
  lab_ = &lab;
  if (lab_unavailable()) return;
  auto up = lab.run("up");
  lab_up_ = up.exit_code == 0;
  lab_log_ = up.output;
  if (!lab_up_) return;
  lab.install_probe();
  repo_ = new GitRepo();
  lab.copy_intent_into(*repo_);
  repo_->commit_all(commit_message);
}

void SharedLabSuite::TearDownTestSuite() {
  delete repo_;
  repo_ = nullptr;
  // Also after a failed `up`: down removes whatever it left.
  if (lab_ && !lab_unavailable()) lab_->run("down");
}

void SharedLabSuite::TearDown() {
  if (lab_up_ && !lab_unavailable()) expect_no_budget_claims(*lab_);
}

void SharedLabSuite::SetUp() {
  if (auto why = lab_unavailable()) GTEST_SKIP() << *why;
  ASSERT_TRUE(lab_up_) << "lab up failed:\n" << lab_log_;
  ASSERT_EQ(lab_->run("wait").exit_code, 0) << "the lab did not converge before the scenario";
}

}  // namespace fabgate::testing::clos_lab
