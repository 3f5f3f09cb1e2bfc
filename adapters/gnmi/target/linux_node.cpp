#include "adapters/gnmi/target/linux_node.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "adapters/core/text.h"
#include "adapters/gnmi/target/process.h"

namespace fabgate::gnmi::target {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return std::string(trim(text.str()));
}

std::optional<std::uint64_t> read_number(const fs::path& path, int base = 10) {
  auto text = read_text(path);
  if (!text || text->empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    std::uint64_t value = std::stoull(*text, &used, base);
    if (used != text->size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The kernel's operstate words (RFC 2863) as OpenConfig's oper-status enum.
std::string oper_status(const std::string& operstate) {
  static const std::map<std::string, std::string> names = {{"up", "UP"},
                                                           {"down", "DOWN"},
                                                           {"unknown", "UNKNOWN"},
                                                           {"dormant", "DORMANT"},
                                                           {"testing", "TESTING"},
                                                           {"notpresent", "NOT_PRESENT"},
                                                           {"lowerlayerdown", "LOWER_LAYER_DOWN"}};
  auto found = names.find(operstate);
  return found == names.end() ? "UNKNOWN" : found->second;
}

// An interface name from a request names a directory under sysfs; nothing else may.
bool plausible_interface_name(const std::string& name) {
  return !name.empty() && name.size() < 16 && name.find('/') == std::string::npos && name != "." &&
         name != "..";
}

std::string frr_state(const std::string& frr) {
  static const std::map<std::string, std::string> names = {
      {"Idle", "IDLE"},         {"Connect", "CONNECT"},         {"Active", "ACTIVE"},
      {"OpenSent", "OPENSENT"}, {"OpenConfirm", "OPENCONFIRM"}, {"Established", "ESTABLISHED"}};
  auto found = names.find(frr);
  return found == names.end() ? "IDLE" : found->second;
}

std::string afi_safi_name(const std::string& frr) {
  static const std::map<std::string, std::string> names = {{"ipv4Unicast", "IPV4_UNICAST"},
                                                           {"ipv6Unicast", "IPV6_UNICAST"},
                                                           {"l2VpnEvpn", "L2VPN_EVPN"},
                                                           {"ipv4Multicast", "IPV4_MULTICAST"},
                                                           {"ipv6Multicast", "IPV6_MULTICAST"}};
  auto found = names.find(frr);
  return found == names.end() ? frr : found->second;
}

}  // namespace

std::string LinuxNode::hostname() {
  if (!options_.hostname.empty()) return options_.hostname;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

namespace {

// The file a program name runs: itself when it names a path, else the first executable of
// that name on PATH.
std::optional<fs::path> program_file(const std::string& program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) return fs::path(program);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    fs::path candidate = fs::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// Field 22 of /proc/PID/stat: when the process started, in clock ticks after boot. A pid
// reused by another process has another start time.
std::optional<std::string> process_start_time(std::uint64_t pid) {
  auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  const auto name_end = stat->rfind(')');  // the command name may hold spaces and ')'
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat->substr(name_end + 1));
  std::string field;
  // After the name: state is field 3, starttime field 22.
  for (int number = 3; number <= 22; ++number)
    if (!(fields >> field)) return std::nullopt;
  return field;
}

}  // namespace

std::optional<std::string> LinuxNode::frr_fingerprint() const {
  if (options_.vtysh.empty() || options_.frr_run_dir.empty()) return std::nullopt;
  auto vtysh = program_file(options_.vtysh.front());
  struct stat program {};
  if (!vtysh || ::stat(vtysh->c_str(), &program) != 0) return std::nullopt;
  std::string fingerprint = "vtysh " + vtysh->string() + " " + std::to_string(program.st_dev) +
                            ":" + std::to_string(program.st_ino) + " " +
                            std::to_string(program.st_size) + " " +
                            std::to_string(program.st_mtim.tv_sec) + "." +
                            std::to_string(program.st_mtim.tv_nsec) + " " +
                            std::to_string(program.st_ctim.tv_sec) + "." +
                            std::to_string(program.st_ctim.tv_nsec) + "\n";
  // `vtysh -N NAME` (or --pathspace) talks to the daemons under the run folder's NAME.
  fs::path run_dir = options_.frr_run_dir;
  for (std::size_t i = 1; i < options_.vtysh.size(); ++i) {
    const std::string& word = options_.vtysh[i];
    if ((word == "-N" || word == "--pathspace") && i + 1 < options_.vtysh.size())
      run_dir /= options_.vtysh[i + 1];
    else if (starts_with(word, "--pathspace="))
      run_dir /= word.substr(12);
  }
  std::error_code error;
  std::vector<fs::path> pid_files;
  for (fs::directory_iterator it(run_dir, error), end; !error && it != end; it.increment(error))
    if (it->path().extension() == ".pid") pid_files.push_back(it->path());
  if (error || pid_files.empty()) return std::nullopt;  // no daemon to prove anything by
  std::sort(pid_files.begin(), pid_files.end());
  for (const auto& file : pid_files) {
    auto pid = read_number(file);
    if (!pid || *pid == 0) return std::nullopt;
    auto started = process_start_time(*pid);
    if (!started) return std::nullopt;  // a daemon FRR lists is gone: let vtysh say so
    fingerprint += file.filename().string() + " " + std::to_string(*pid) + " " + *started + "\n";
  }
  return fingerprint;
}

NodeResult<std::string> LinuxNode::software_version() {
  std::vector<std::string> parts;
  if (auto os_release = read_text("/etc/os-release")) {
    for (const auto& line : split_lines(*os_release)) {
      if (!starts_with(line, "PRETTY_NAME=")) continue;
      std::string value = line.substr(12);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      parts.push_back(value);
    }
  }
  utsname uts{};
  if (::uname(&uts) == 0) parts.push_back(std::string(uts.sysname) + " " + uts.release);
  // vtysh connects to every FRR daemon before it answers: 0.3-0.6 s on a busy lab switch, the
  // slowest read of a restore round. Its answer is vtysh's own version, so it stays true while
  // neither the vtysh file nor any daemon (pid and start time) changed: then the answer vtysh
  // gave under the same fingerprint is served without asking again. Anything unreadable, or a
  // fingerprint that moved while vtysh answered, asks vtysh.
  const auto before = frr_fingerprint();
  if (before) {
    std::lock_guard lock(frr_version_mutex_);
    if (!frr_version_.empty() && frr_version_fingerprint_ == *before) {
      parts.push_back(frr_version_);
      return join(parts, "; ");
    }
  }
  std::vector<std::string> argv = options_.vtysh;
  argv.insert(argv.end(), {"-c", "show version"});
  CommandOutcome outcome = run_command(argv, options_.command_timeout);
  // A node without vtysh has no FRR, and its version is the OS's alone. A vtysh that is there
  // but fails or times out is no answer: leaving FRR out would tell a compat or compare gate
  // that FRR vanished (or, on a baseline, that it was never there).
  bool no_frr = !outcome.started || (!outcome.timed_out && outcome.exit_status == 127);
  if (no_frr) return join(parts, "; ");
  const std::string command = join(argv, " ");
  if (!outcome.succeeded()) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "FRR's version is not available: " + command + ": " +
                           outcome.describe_failure(options_.command_timeout)};
  }
  // "FRRouting 8.4.4 (leaf1) on Linux(6.1.0)." -> "FRRouting 8.4.4"
  std::istringstream words(outcome.out);
  std::string product;
  std::string version;
  if (!(words >> product >> version) || product != "FRRouting") {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "FRR's version is not available: " + command + ": unexpected output: " +
                           std::string(trim(outcome.out.substr(0, 120)))};
  }
  const std::string frr = product + " " + version;
  if (before && frr_fingerprint() == before) {
    std::lock_guard lock(frr_version_mutex_);
    frr_version_ = frr;
    frr_version_fingerprint_ = *before;
  }
  parts.push_back(frr);
  return join(parts, "; ");
}

NodeResult<InterfaceState> LinuxNode::interface(const std::string& name) {
  fs::path dir = fs::path(options_.sysfs_net) / name;
  std::error_code error;
  if (!plausible_interface_name(name) || !fs::exists(dir, error)) {
    return NodeFailure{NodeFailure::Kind::not_found, "no interface '" + name + "' on this node"};
  }
  InterfaceState state;
  state.name = name;
  auto mtu = read_number(dir / "mtu");
  auto flags = read_number(dir / "flags", 16);
  auto operstate = read_text(dir / "operstate");
  if (!mtu || !flags || !operstate) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "cannot read " + dir.string() + "/{mtu,flags,operstate}"};
  }
  state.mtu = static_cast<int>(*mtu);
  state.admin_up = (*flags & 0x1) != 0;  // IFF_UP
  state.oper_status = oper_status(*operstate);
  state.ifindex = static_cast<int>(read_number(dir / "ifindex").value_or(0));
  static const std::pair<const char*, const char*> counter_files[] = {
      {"rx_bytes", "in-octets"},          {"rx_packets", "in-pkts"},
      {"rx_errors", "in-errors"},         {"rx_dropped", "in-discards"},
      {"multicast", "in-multicast-pkts"}, {"tx_bytes", "out-octets"},
      {"tx_packets", "out-pkts"},         {"tx_errors", "out-errors"},
      {"tx_dropped", "out-discards"}};
  for (const auto& [file, counter] : counter_files) {
    if (auto value = read_number(dir / "statistics" / file)) state.counters[counter] = *value;
  }
  // Readable also while the interface is down (unlike `carrier`); absent on old kernels, and
  // then the counter is simply not served.
  if (auto value = read_number(dir / "carrier_changes"))
    state.counters["carrier-transitions"] = *value;
  return state;
}

NodeResult<std::map<std::string, std::vector<InterfaceAddress>>> LinuxNode::addresses() {
  std::vector<std::string> argv = {options_.ip, "-j", "addr", "show"};
  CommandOutcome outcome = run_command(argv, options_.command_timeout);
  if (!outcome.succeeded()) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       join(argv, " ") + ": " + outcome.describe_failure(options_.command_timeout)};
  }
  nlohmann::json parsed = nlohmann::json::parse(outcome.out, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       join(argv, " ") + ": output is not a JSON list"};
  }
  std::map<std::string, std::vector<InterfaceAddress>> out;
  for (const auto& link : parsed) {
    if (!link.is_object() || !link.contains("ifname")) continue;
    auto& list = out[link.value("ifname", std::string())];
    for (const auto& info : link.value("addr_info", nlohmann::json::array())) {
      if (!info.is_object() || !info.contains("local") || !info.contains("prefixlen")) continue;
      list.push_back({info.value("local", std::string()), info.value("prefixlen", 0),
                      info.value("family", std::string()) == "inet6"});
    }
  }
  return out;
}

NodeResult<std::vector<NicInfo>> LinuxNode::nics() {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(options_.sysfs_net, error)) {
    names.push_back(entry.path().filename().string());
  }
  if (error) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "cannot list " + options_.sysfs_net + ": " + error.message()};
  }
  std::sort(names.begin(), names.end());
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       std::string("socket for ethtool: ") + std::strerror(errno)};
  }
  std::vector<NicInfo> out;
  for (const auto& name : names) {
    if (!plausible_interface_name(name)) continue;
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    ifreq request{};
    std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
    request.ifr_data = reinterpret_cast<char*>(&info);
    // Interfaces without a driver (lo) refuse the request; ethtool -i skips them the same way.
    if (::ioctl(fd, SIOCETHTOOL, &request) != 0) continue;
    out.push_back({name, info.driver, info.version, info.fw_version, info.bus_info});
  }
  ::close(fd);
  return out;
}

NodeResult<std::vector<InterfaceState>> LinuxNode::interfaces() {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(options_.sysfs_net, error)) {
    names.push_back(entry.path().filename().string());
  }
  if (error) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "cannot list " + options_.sysfs_net + ": " + error.message()};
  }
  std::sort(names.begin(), names.end());
  auto addresses = this->addresses();
  if (!addresses) return addresses.error();
  std::vector<InterfaceState> out;
  for (const auto& name : names) {
    auto state = interface(name);
    // An interface removed between listing and reading is simply gone.
    if (!state && state.error().kind == NodeFailure::Kind::not_found) continue;
    if (!state) return state.error();
    if (auto found = addresses->find(name); found != addresses->end()) {
      state->addresses = found->second;
    }
    out.push_back(std::move(state.value()));
  }
  return out;
}

NodeResult<std::vector<BgpNeighborState>> LinuxNode::bgp_neighbors() {
  std::vector<std::string> argv = options_.vtysh;
  argv.insert(argv.end(), {"-c", "show bgp neighbors json"});
  std::string command = join(argv, " ");
  CommandOutcome outcome = run_command(argv, options_.command_timeout);
  if (!outcome.succeeded()) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "FRR is not available: " + command + ": " +
                           outcome.describe_failure(options_.command_timeout),
                       outcome.timed_out};
  }
  nlohmann::json parsed = nlohmann::json::parse(outcome.out, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "FRR is not available: " + command + ": output is not a JSON object: " +
                           std::string(trim(outcome.out.substr(0, 120)))};
  }
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  std::vector<BgpNeighborState> out;
  for (const auto& [address, peer] : parsed.items()) {
    if (!peer.is_object() || !peer.contains("bgpState")) continue;
    BgpNeighborState state;
    state.address = address;
    state.peer_as = peer.value("remoteAs", std::uint64_t{0});
    state.local_as = peer.value("localAs", std::uint64_t{0});
    state.session_state = frr_state(peer.value("bgpState", std::string()));
    if (state.session_state == "ESTABLISHED" && peer.contains("bgpTimerUpMsec")) {
      std::int64_t up_ms = peer.value("bgpTimerUpMsec", std::int64_t{0});
      state.last_established_ns = static_cast<std::uint64_t>(now_ms - up_ms) * 1'000'000ULL;
    }
    if (auto established = peer.find("connectionsEstablished");
        established != peer.end() && established->is_number_unsigned())
      state.established_transitions = established->get<std::uint64_t>();
    if (auto families = peer.find("addressFamilyInfo");
        families != peer.end() && families->is_object()) {
      for (const auto& [family, info] : families->items()) {
        if (info.is_object() && info.contains("acceptedPrefixCounter")) {
          state.prefixes_received[afi_safi_name(family)] =
              info.value("acceptedPrefixCounter", std::uint64_t{0});
          state.prefixes_sent[afi_safi_name(family)] =
              info.value("sentPrefixCounter", std::uint64_t{0});
        }
      }
    }
    out.push_back(std::move(state));
  }
  return out;
}

// The kernel's route protocol (rtnetlink's, as iproute2 names it) as an OpenConfig
// origin-protocol identity; "boot" (a route added by hand) and unknown ones have none.
static std::string origin_protocol_of(const std::string& protocol) {
  if (protocol == "bgp") return "BGP";
  if (protocol == "kernel") return "DIRECTLY_CONNECTED";
  if (protocol == "static") return "STATIC";
  if (protocol == "ospf") return "OSPF";
  if (protocol == "isis") return "ISIS";
  return "";
}

// A destination the kernel adds to IPv6's main table for every interface that has IPv6: the
// link-local net fe80::/64 (and, on kernels that keep it in main rather than local, the
// multicast net ff00::/8). Neither is a forwarding entry of the fabric, they repeat once per
// interface under one prefix (which the AFT keys by), and the interfaces' link-local
// addresses are left out of the snapshot as well (the ip-addr normalizer).
static bool per_interface_ipv6_route(const std::string& dst) {
  std::string head = dst.substr(0, 3);
  std::transform(head.begin(), head.end(), head.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  bool link_local = head == "fe8" || head == "fe9" || head == "fea" || head == "feb";
  bool multicast = head.rfind("ff", 0) == 0;
  return link_local || multicast;
}

// The unicast routes of the main table of one address family, from iproute2's JSON.
static NodeResult<std::vector<UnicastRoute>> main_table_routes(const LinuxNodeOptions& options,
                                                               bool ipv6) {
  std::vector<std::string> argv = {options.ip, "-j",  ipv6 ? "-6" : "-4", "route", "show",
                                   "table",    "main"};
  CommandOutcome outcome = run_command(argv, options.command_timeout);
  if (!outcome.succeeded())
    return NodeFailure{NodeFailure::Kind::unavailable,
                       join(argv, " ") + ": " + outcome.describe_failure(options.command_timeout)};
  auto document = nlohmann::json::parse(outcome.out, nullptr, false);
  if (!document.is_array())
    return NodeFailure{NodeFailure::Kind::unavailable, join(argv, " ") + ": not a JSON list"};
  std::vector<UnicastRoute> routes;
  for (const auto& entry : document) {
    if (!entry.is_object() || !entry.contains("dst") || !entry["dst"].is_string()) continue;
    // Only unicast routes are forwarding entries of the AFT (no blackhole, unreachable...).
    if (entry.contains("type") && entry["type"] != "unicast") continue;
    std::string dst = entry["dst"];
    if (ipv6 && per_interface_ipv6_route(dst)) continue;
    UnicastRoute route;
    if (dst == "default")
      route.prefix = ipv6 ? "::/0" : "0.0.0.0/0";
    else if (dst.find('/') == std::string::npos)
      route.prefix = dst + (ipv6 ? "/128" : "/32");
    else
      route.prefix = dst;
    route.origin_protocol = origin_protocol_of(entry.value("protocol", "boot"));
    auto hop_of = [](const nlohmann::json& hop) {
      return UnicastRoute::NextHop{hop.value("gateway", ""), hop.value("dev", "")};
    };
    if (entry.contains("nexthops") && entry["nexthops"].is_array()) {
      for (const auto& hop : entry["nexthops"]) route.next_hops.push_back(hop_of(hop));
    } else {
      route.next_hops.push_back(hop_of(entry));
    }
    routes.push_back(std::move(route));
  }
  return routes;
}

NodeResult<std::vector<Ipv4Route>> LinuxNode::ipv4_routes() {
  return main_table_routes(options_, /*ipv6=*/false);
}

NodeResult<std::vector<Ipv6Route>> LinuxNode::ipv6_routes() {
  return main_table_routes(options_, /*ipv6=*/true);
}

NodeResult<nlohmann::json> LinuxNode::lldpcli(const std::vector<std::string>& words) {
  std::vector<std::string> argv = {options_.lldpcli, "-u", options_.lldp_socket, "-f", "json"};
  argv.insert(argv.end(), words.begin(), words.end());
  CommandOutcome outcome = run_command(argv, options_.command_timeout);
  std::string command = join(argv, " ");
  if (!outcome.succeeded()) {
    std::string detail = outcome.describe_failure(options_.command_timeout);
    if (auto said = trim(outcome.err); !said.empty()) detail += ": " + std::string(said);
    return NodeFailure{NodeFailure::Kind::unavailable,
                       "the LLDP agent does not answer: " + command + ": " + detail};
  }
  auto parsed = nlohmann::json::parse(outcome.out, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return NodeFailure{NodeFailure::Kind::unavailable,
                       command + ": output is not a JSON object: " +
                           std::string(trim(outcome.out.substr(0, 120)))};
  }
  return parsed;
}

namespace {

// lldpcli's `-f json` holds one interface as {"eth0": {...}} and several as a list of such
// objects (one per neighbour for `show neighbors`: a port with two neighbours appears twice).
std::vector<std::pair<std::string, const nlohmann::json*>> lldpcli_interfaces(
    const nlohmann::json& document) {
  std::vector<std::pair<std::string, const nlohmann::json*>> out;
  const auto lldp = document.find("lldp");
  if (lldp == document.end() || !lldp->is_object()) return out;
  const auto interfaces = lldp->find("interface");
  if (interfaces == lldp->end()) return out;
  auto add = [&out](const nlohmann::json& entry) {
    if (!entry.is_object()) return;
    for (const auto& [name, value] : entry.items()) out.emplace_back(name, &value);
  };
  if (interfaces->is_array()) {
    for (const auto& entry : *interfaces) add(entry);
  } else {
    add(*interfaces);
  }
  return out;
}

std::string string_at(const nlohmann::json& object, std::initializer_list<const char*> names) {
  const nlohmann::json* node = &object;
  for (const char* name : names) {
    if (!node->is_object()) return "";
    auto found = node->find(name);
    if (found == node->end()) return "";
    node = &*found;
  }
  if (node->is_array() && !node->empty()) node = &node->front();  // several management addresses
  return node->is_string() ? node->get<std::string>() : "";
}

// lldpd's id subtypes as openconfig-lldp-types' chassis-id-type and port-id-type.
std::string lldp_id_type(const std::string& lldpd) {
  static const std::map<std::string, std::string> names = {{"mac", "MAC_ADDRESS"},
                                                           {"ifname", "INTERFACE_NAME"},
                                                           {"ifalias", "INTERFACE_ALIAS"},
                                                           {"ip", "NETWORK_ADDRESS"},
                                                           {"local", "LOCAL"}};
  auto found = names.find(lldpd);
  return found == names.end() ? "" : found->second;
}

LldpNeighbor lldp_neighbor(const nlohmann::json& entry, std::size_t position) {
  LldpNeighbor neighbor;
  neighbor.id = string_at(entry, {"rid"});
  if (neighbor.id.empty()) neighbor.id = std::to_string(position);
  // The chassis is keyed by its system name; without one its members sit there directly.
  const nlohmann::json* chassis = nullptr;
  if (auto found = entry.find("chassis"); found != entry.end() && found->is_object()) {
    chassis = &*found;
    if (!found->contains("id") && found->size() == 1 && found->begin()->is_object()) {
      neighbor.system_name = found->begin().key();
      chassis = &*found->begin();
    }
  }
  if (chassis != nullptr) {
    neighbor.chassis_id = string_at(*chassis, {"id", "value"});
    neighbor.chassis_id_type = lldp_id_type(string_at(*chassis, {"id", "type"}));
    neighbor.system_description = string_at(*chassis, {"descr"});
    neighbor.management_address = string_at(*chassis, {"mgmt-ip"});
  }
  neighbor.port_id = string_at(entry, {"port", "id", "value"});
  neighbor.port_id_type = lldp_id_type(string_at(entry, {"port", "id", "type"}));
  neighbor.port_description = string_at(entry, {"port", "descr"});
  return neighbor;
}

}  // namespace

NodeResult<std::vector<LldpInterface>> LinuxNode::lldp_interfaces() {
  if (options_.lldp_socket.empty()) {
    return NodeFailure{NodeFailure::Kind::not_found,
                       "no LLDP agent is configured for fabgate-gnmid on this node "
                       "(--lldp-socket)"};
  }
  // The agent's ports first, so that a port where nobody is heard is an empty list.
  auto ports = lldpcli({"show", "interfaces"});
  if (!ports) return ports.error();
  auto heard = lldpcli({"show", "neighbors", "details"});
  if (!heard) return heard.error();
  std::map<std::string, LldpInterface> by_name;
  for (const auto& [name, entry] : lldpcli_interfaces(*ports)) by_name[name].name = name;
  std::size_t position = 0;
  for (const auto& [name, entry] : lldpcli_interfaces(*heard)) {
    auto& port = by_name[name];
    port.name = name;
    port.neighbors.push_back(lldp_neighbor(*entry, ++position));
  }
  std::vector<LldpInterface> out;
  for (auto& [name, port] : by_name) {
    std::sort(port.neighbors.begin(), port.neighbors.end(),
              [](const LldpNeighbor& a, const LldpNeighbor& b) { return a.id < b.id; });
    out.push_back(std::move(port));
  }
  return out;
}

NodeResult<Ok> LinuxNode::ip_link_set(const std::string& interface, std::vector<std::string> what) {
  auto current = this->interface(interface);
  if (!current) return current.error();
  std::vector<std::string> argv = {options_.ip, "link", "set", "dev", interface};
  argv.insert(argv.end(), what.begin(), what.end());
  CommandOutcome outcome = run_command(argv, options_.command_timeout);
  if (outcome.succeeded()) return Ok{};
  NodeFailure::Kind kind = outcome.started && !outcome.timed_out ? NodeFailure::Kind::rejected
                                                                 : NodeFailure::Kind::unavailable;
  return NodeFailure{kind,
                     join(argv, " ") + ": " + outcome.describe_failure(options_.command_timeout)};
}

NodeResult<Ok> LinuxNode::set_mtu(const std::string& interface, int mtu) {
  return ip_link_set(interface, {"mtu", std::to_string(mtu)});
}

NodeResult<Ok> LinuxNode::set_enabled(const std::string& interface, bool enabled) {
  return ip_link_set(interface, {enabled ? "up" : "down"});
}

}  // namespace fabgate::gnmi::target
