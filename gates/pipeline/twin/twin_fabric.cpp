#include "gates/pipeline/twin/twin_fabric.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "adapters/core/child_process.h"
#include "adapters/core/text.h"
#include "adapters/core/time.h"

namespace fabgate::pipeline::twin {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The fields of /proc/<process>/stat after the command name ("self" or a pid): the state is
// [0], utime [11], stime [12], the start time [19], rss [21]. Empty when it cannot be read.
std::vector<std::string> stat_fields(const std::string& process) {
  std::ifstream stat("/proc/" + process + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  return split_words(line.substr(close + 1));
}

// The environment a twin command sees, whatever the controller's: what a fresh login has.
const std::vector<std::string>& clean_environment() {
  static const std::vector<std::string> env = {
      "env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/",
      "SHELL=/bin/sh", "LANG=C.UTF-8"};
  return env;
}

std::vector<std::string> in_node(pid_t anchor, std::vector<std::string> command) {
  std::vector<std::string> argv = {"nsenter", "--target", std::to_string(anchor), "--net",
                                   "--mount", "--uts",    "--wd=/",                "--"};
  argv.insert(argv.end(), clean_environment().begin(), clean_environment().end());
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Runs argv; an error names what ran and what it said.
Expected<Ok, std::string> run(const std::vector<std::string>& argv, Duration timeout,
                              const std::string& input = "") {
  ChildRequest request;
  request.argv = argv;
  request.input = input;
  request.deadline = timeout;
  auto result = run_child(request);
  const std::string what = argv.size() > 14 && argv[0] == "nsenter"
                               ? join(std::vector<std::string>(argv.begin() + 14, argv.end()), " ")
                               : join(argv, " ");
  if (!result.ok()) return what + ": " + result.error().message;
  if (result->timed_out) return what + ": did not finish within " + format_duration(timeout);
  if (result->exit_status != 0) {
    std::string said(trim(result->err.empty() ? result->out : result->err));
    std::replace(said.begin(), said.end(), '\n', ' ');
    if (said.size() > 300) said = said.substr(0, 300) + "...";
    return what + ": exit " + std::to_string(result->exit_status) +
           (said.empty() ? std::string() : ": " + said);
  }
  return Ok{};
}

ino_t netns_inode(pid_t pid) {
  struct stat info {};
  std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
  return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// Every process whose network namespace is `netns`.
std::vector<pid_t> processes_in(ino_t netns) {
  std::vector<pid_t> found;
  if (netns == 0) return found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (!end || *end != '\0' || pid <= 0) continue;
    if (netns_inode(static_cast<pid_t>(pid)) == netns) found.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return found;
}

// Stops every process in the namespace: TERM, a grace period, then KILL. True when none is left.
bool stop_processes_in(ino_t netns, pid_t anchor) {
  for (pid_t pid : processes_in(netns))
    if (pid != anchor) ::kill(pid, SIGTERM);
  for (int i = 0; i < 40; ++i) {
    auto left = processes_in(netns);
    if (left.empty() || (left.size() == 1 && left[0] == anchor)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (pid_t pid : processes_in(netns)) ::kill(pid, SIGKILL);
  if (anchor > 0) {
    int status = 0;
    // Ours: reap it (KILL was sent above); a sweep's anchors belong to a dead process.
    ::waitpid(anchor, &status, WNOHANG);
  }
  for (int i = 0; i < 40; ++i) {
    if (processes_in(netns).empty()) return true;
    if (anchor > 0) {
      int status = 0;
      ::waitpid(anchor, &status, WNOHANG);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return processes_in(netns).empty();
}

// Forks the process that holds a node's namespaces: new network, mount (private propagation)
// and UTS namespaces, the node's hostname, no file descriptors of the controller, its own
// session (a terminal's Ctrl-C does not reach it), killed when the thread that made it ends.
Expected<pid_t, std::string> start_anchor(const std::string& node, const std::string& hostname) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return node + ": pipe: " + std::strerror(errno);
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  const int max_fd = static_cast<int>(std::min<rlim_t>(files.rlim_cur, 65536));
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return node + ": fork: " + std::strerror(errno);
  }
  if (pid == 0) {
    // Only system calls from here: the controller has threads.
    for (int fd = 3; fd < max_fd; ++fd)
      if (fd != ready[1]) ::close(fd);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::setsid();
    for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(signal, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    char status = 0;
    if (::unshare(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWUTS) != 0) status = 1;
    if (status == 0 && ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) status = 2;
    if (status == 0 && ::sethostname(hostname.data(), hostname.size()) != 0) status = 3;
    (void)!::write(ready[1], &status, 1);
    ::close(ready[1]);
    if (status != 0) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char status = 9;
  ssize_t got = -1;
  do {
    got = ::read(ready[0], &status, 1);
  } while (got < 0 && errno == EINTR);
  ::close(ready[0]);
  if (got != 1 || status != 0) {
    ::kill(pid, SIGKILL);
    int ignored = 0;
    ::waitpid(pid, &ignored, 0);
    static const char* steps[] = {"", "unshare", "private mounts", "sethostname"};
    return node + ": could not make its namespaces (" +
           (got == 1 && status > 0 && status < 4 ? steps[static_cast<int>(status)] : "anchor died") +
           "; fabgate twin needs root)";
  }
  return pid;
}

std::string frr_defaults_of(const std::string& config) {
  std::istringstream lines(config);
  std::string line;
  while (std::getline(lines, line)) {
    auto words = split_words(line);
    if (words.size() == 3 && words[0] == "frr" && words[1] == "defaults") {
      for (const char* known : {"datacenter", "traditional"})
        if (words[2] == known) return words[2];
    }
  }
  return "traditional";
}

// FRR daemons the configuration needs, zebra first.
std::vector<std::string> frr_daemons_for(const std::string& config) {
  std::vector<std::string> daemons = {"zebra"};
  auto has = [&](const char* text) { return config.find(text) != std::string::npos; };
  if (has("\nip route ") || has("\nipv6 route ") || config.rfind("ip route ", 0) == 0)
    daemons.push_back("staticd");
  if (has("\nbfd") || has(" bfd")) daemons.push_back("bfdd");
  if (has("\nrouter bgp ")) daemons.push_back("bgpd");
  if (has("\nrouter ospf ") || has("\nrouter ospf\n")) daemons.push_back("ospfd");
  return daemons;
}

std::string ip_batch(const TwinNode& node) {
  std::ostringstream batch;
  const auto peers = unconnected_peer_names(node);
  std::size_t unconnected = 0;
  batch << "link set lo up\n";
  for (const auto& address : node.loopback_addresses) batch << "addr add " << address << " dev lo\n";
  for (const auto& interface : node.interfaces) {
    switch (interface.kind) {
      case TwinInterface::Kind::bridge:
        batch << "link add " << interface.name << " mtu " << interface.mtu << " type bridge\n";
        break;
      case TwinInterface::Kind::dummy:
        // An interface with nothing behind it. Not a `dummy` device (a kernel module many
        // hosts lack): a veth whose other end stays in the node, up, and leads nowhere.
        batch << "link add " << interface.name << " mtu " << interface.mtu
              << " type veth peer name " << peers[unconnected] << " mtu " << interface.mtu << "\n"
              << "link set " << peers[unconnected] << " up\n";
        ++unconnected;
        break;
      case TwinInterface::Kind::vxlan:
        batch << "link add " << interface.name << " mtu " << interface.mtu << " type vxlan id "
              << interface.vni << " dstport " << interface.vxlan_port << " local "
              << interface.vxlan_local << (interface.vxlan_learning ? " learning" : " nolearning")
              << "\n";
        break;
      case TwinInterface::Kind::veth:
        break;  // made with its peer
    }
  }
  for (const auto& interface : node.interfaces) {
    if (!interface.master.empty())
      batch << "link set " << interface.name << " master " << interface.master << "\n";
    for (const auto& address : interface.addresses)
      batch << "addr add " << address << " dev " << interface.name << "\n";
    if (interface.admin_up) batch << "link set " << interface.name << " up\n";
  }
  return batch.str();
}

// The controller's mounts a twin node sees read-only: a step runs as root on the controller, and
// nothing it writes by mistake may land in the controller's files. /proc, /sys and /dev stay as
// they are; /tmp is the node's own.
std::vector<std::string> mounts_to_protect(pid_t anchor) {
  std::vector<std::string> points;
  std::ifstream info("/proc/" + std::to_string(anchor) + "/mountinfo");
  std::string line;
  while (std::getline(info, line)) {
    std::istringstream fields(line);
    std::string id, parent, devices, root, point;
    fields >> id >> parent >> devices >> root >> point;
    if (point.empty() || point.find('\\') != std::string::npos) continue;
    bool system = false;
    for (const char* skip : {"/proc", "/sys", "/dev", "/tmp", "/var/tmp"})
      if (point == skip || point.rfind(std::string(skip) + "/", 0) == 0) system = true;
    if (!system) points.push_back(point);
  }
  return points;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

pid_t TwinFabric::anchor_of(const std::string& node) const {
  for (const auto& entry : nodes_)
    if (entry.name == node) return entry.anchor;
  return 0;
}

nlohmann::json TwinFabric::usage() const {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  double cpu_s = 0, rss = 0;
  int processes = 0;
  for (const auto& node : nodes_)
    for (pid_t pid : processes_in(node.netns)) {
      auto fields = stat_fields(std::to_string(pid));
      if (fields.size() < 22) continue;
      ++processes;
      cpu_s += (std::strtod(fields[11].c_str(), nullptr) + std::strtod(fields[12].c_str(), nullptr)) /
               ticks;
      rss += std::strtod(fields[21].c_str(), nullptr) * page;
    }
  return {{"processes", processes}, {"cpu_s", cpu_s}, {"rss_mib", rss / (1024.0 * 1024.0)}};
}

TwinFabric::~TwinFabric() { tear_down(); }

std::vector<std::string> TwinFabric::tear_down() {
  std::vector<std::string> problems;
  if (torn_down_) return problems;
  torn_down_ = true;
  for (const auto& node : nodes_)
    if (!stop_processes_in(node.netns, node.anchor))
      problems.push_back(node.name + ": processes still running in its namespace after KILL");
  std::error_code ignored;
  if (problems.empty()) fs::remove_all(dir_, ignored);
  return problems;
}

std::vector<std::string> TwinFabric::sweep_abandoned(const fs::path& state_root) {
  std::vector<std::string> swept;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(state_root, error)) {
    std::ifstream owner_file(entry.path() / "owner");
    long owner = 0;
    std::string started;
    if (!(owner_file >> owner >> started)) continue;
    // The owner is alive when its pid runs and started at the time the file says.
    auto fields = stat_fields(std::to_string(owner));
    if (fields.size() > 19 && fields[19] == started) continue;
    for (const auto& node : fs::directory_iterator(entry.path() / "nodes", error)) {
      std::ifstream netns_file(node.path() / "netns");
      unsigned long long netns = 0;
      if (netns_file >> netns) stop_processes_in(static_cast<ino_t>(netns), 0);
    }
    fs::remove_all(entry.path(), error);
    swept.push_back(entry.path().string());
  }
  return swept;
}

Expected<std::unique_ptr<TwinFabric>, std::string> TwinFabric::build(
    const TwinPlan& plan, const FabricSettings& settings) {
  std::error_code error;
  // Made here: root's alone to write (a folder that exists keeps its owner and mode).
  if (fs::create_directories(settings.state_root, error))
    ::chmod(settings.state_root.c_str(), 0755);
  if (error) return "twin state folder " + settings.state_root.string() + ": " + error.message();
  sweep_abandoned(settings.state_root);
  std::random_device random;
  std::ostringstream name;
  name << ::getpid() << "-" << std::hex << random();
  std::unique_ptr<TwinFabric> fabric(new TwinFabric(settings.state_root / name.str()));
  fs::create_directories(fabric->dir_ / "nodes", error);
  if (error) return "twin folder " + fabric->dir_.string() + ": " + error.message();
  {
    auto fields = stat_fields("self");
    write_file(fabric->dir_ / "owner",
               std::to_string(::getpid()) + " " + (fields.size() > 19 ? fields[19] : "?") + "\n");
  }
  const Duration timeout = settings.command_timeout;

  // 1. A node: its namespaces, and in them the sysctls a router or host has.
  for (const auto& node : plan.nodes) {
    auto anchor = start_anchor(node.name, node.hostname);
    if (!anchor.ok()) return anchor.error();
    Node made{node.name, *anchor, netns_inode(*anchor), fabric->dir_ / "nodes" / node.name};
    fabric->nodes_.push_back(made);
    fs::create_directories(made.dir / "log", error);
    write_file(made.dir / "netns", std::to_string(made.netns) + "\n");
    std::vector<std::string> sysctls = {
        "sysctl", "-q", "-w",
        std::string("net.ipv4.ip_forward=") + (node.emulator == Emulator::frr ? "1" : "0"),
        "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"};
    if (node.ipv4_hash_policy)
      sysctls.push_back("net.ipv4.fib_multipath_hash_policy=" +
                        std::to_string(*node.ipv4_hash_policy));
    if (auto done = run(in_node(made.anchor, sysctls), timeout); !done.ok())
      return node.name + ": " + done.error();
    // The node's own sysfs (/sys/class/net lists the controller's interfaces otherwise), as
    // `ip netns exec` does.
    if (auto done = run(in_node(made.anchor, {"mount", "-t", "sysfs", "fabgate-twin", "/sys"}),
                        timeout);
        !done.ok())
      return node.name + ": " + done.error();
    // A private /tmp and /var/tmp (FRR keeps crash logs there), then every other mount
    // read-only (binds made later stay writable).
    for (const char* scratch : {"/tmp", "/var/tmp"})
      if (auto done = run(in_node(made.anchor, {"mount", "-t", "tmpfs", "-o", "mode=1777",
                                                "fabgate-twin", scratch}),
                          timeout);
          !done.ok())
        return node.name + ": " + done.error();
    for (const auto& point : mounts_to_protect(made.anchor))
      (void)run(in_node(made.anchor, {"mount", "-o", "remount,bind,ro", point}), timeout);
  }

  // 2. Links: both ends of each veth made directly in their namespaces.
  for (const auto& link : plan.links) {
    const TwinNode* a = plan.find(link.node_a);
    const TwinNode* b = plan.find(link.node_b);
    auto mtu_of = [](const TwinNode* node, const std::string& name) {
      for (const auto& interface : node->interfaces)
        if (interface.name == name) return interface.mtu;
      return 1500;
    };
    auto done = run({"ip", "link", "add", link.interface_a, "netns",
                     std::to_string(fabric->anchor_of(link.node_a)), "mtu",
                     std::to_string(mtu_of(a, link.interface_a)), "type", "veth", "peer", "name",
                     link.interface_b, "netns", std::to_string(fabric->anchor_of(link.node_b)),
                     "mtu", std::to_string(mtu_of(b, link.interface_b))},
                    timeout);
    if (!done.ok())
      return "link " + link.node_a + " " + link.interface_a + " <-> " + link.node_b + " " +
             link.interface_b + ": " + done.error();
  }

  // 3. Interfaces, addresses and routes, one `ip -batch` per node (it stops at the first line
  //    the kernel refuses and names it).
  for (const auto& node : plan.nodes) {
    const pid_t anchor = fabric->anchor_of(node.name);
    if (auto done = run(in_node(anchor, {"ip", "-batch", "-"}), timeout, ip_batch(node));
        !done.ok())
      return node.name + ": " + done.error();
    for (const auto& route : node.static_routes) {
      std::vector<std::string> argv = {"ip", "route", "add"};
      for (auto& word : split_words(route)) argv.push_back(word);
      if (auto done = run(in_node(anchor, argv), timeout); !done.ok())
        return node.name + ": " + done.error();
    }
  }

  // 3b. nftables as captured: tables, sets and chains, then rules, each on its own (one nft
  //     refuses must not take the rest with it). A twin without them still forwards, so what
  //     nft refuses is a gap in the report, never a failed build; a step that needs it then
  //     fails on the twin and says why.
  for (const auto& node : plan.nodes) {
    const pid_t anchor = fabric->anchor_of(node.name);
    for (const auto* lines : {&node.nft_objects, &node.nft_rules})
      for (const auto& line : *lines)
        if (auto done = run(in_node(anchor, {"nft", "-f", "-"}), timeout, line + "\n");
            !done.ok())
          fabric->build_gaps_.push_back(node.name + " nftables: not reproduced (" +
                                        line.substr(0, 200) + "): " + done.error());
  }

  // 3c. Every VXLAN device routes each packet it sends on its own, as a switch's ASIC hashes
  //     each encapsulated flow's outer source port over the uplinks. Linux's VXLAN driver
  //     instead caches the route to each remote VTEP and reuses it whatever the source port,
  //     pinning every overlay flow of a node to one uplink: on a twin the overlay's traffic
  //     would be one elephant flow, and the load spread it measures would move whenever a
  //     route change (any change's) re-resolves it. The driver skips that cache for a packet
  //     that carries a mark, so an egress hook marks them; nothing on the twin reads the mark.
  for (const auto& node : plan.nodes) {
    std::ostringstream table;
    int chains = 0;
    for (const auto& interface : node.interfaces) {
      if (interface.kind != TwinInterface::Kind::vxlan) continue;
      table << "  chain vxlan" << ++chains << " {\n    type filter hook egress device \""
            << interface.name << "\" priority 0; policy accept;\n    meta mark set "
            << kVxlanRouteMark << "\n  }\n";
    }
    if (chains == 0) continue;
    const std::string batch =
        "table netdev " + std::string(kVxlanSpreadTable) + " {\n" + table.str() + "}\n";
    if (auto done = run(in_node(fabric->anchor_of(node.name), {"nft", "-f", "-"}), timeout, batch);
        !done.ok())
      fabric->build_gaps_.push_back(
          node.name +
          " VXLAN: every overlay flow to a remote VTEP shares one uplink on the "
          "twin (no nftables egress hook to bypass the driver's route cache: " +
          done.error() + ")");
  }

  // 4. FRR on every switch: its own /etc/frr and /run/frr (so a plain `vtysh` in a step
  //    reaches this node's daemons), the daemons its configuration needs, then the captured
  //    configuration loaded as an integrated config.
  for (const auto& node : plan.nodes) {
    if (node.emulator != Emulator::frr) continue;
    const pid_t anchor = fabric->anchor_of(node.name);
    const fs::path dir = fabric->dir_ / "nodes" / node.name;
    fs::create_directories(dir / "frr", error);
    fs::create_directories(dir / "run", error);
    write_file(dir / "frr" / "frr.conf", node.frr_config);
    write_file(dir / "frr" / "vtysh.conf", "service integrated-vtysh-config\n");
    write_file(dir / "frr" / "daemons", "");
    for (const auto& [what, argv] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"chown", {"chown", "-R", "frr:frr", (dir / "frr").string(), (dir / "run").string(),
                        (dir / "log").string()}},
             {"mount", in_node(anchor, {"mount", "--bind", (dir / "frr").string(), "/etc/frr"})},
             {"mount", in_node(anchor, {"mount", "--bind", (dir / "run").string(), "/run/frr"})},
             // A bind of a folder on a read-only mount is read-only too: these two are the
             // node's own and stay writable.
             {"mount", in_node(anchor, {"mount", "-o", "remount,bind,rw", "/etc/frr"})},
             {"mount", in_node(anchor, {"mount", "-o", "remount,bind,rw", "/run/frr"})}}) {
      if (auto done = run(argv, timeout); !done.ok()) return node.name + ": " + done.error();
    }
    const std::string defaults = frr_defaults_of(node.frr_config);
    const auto daemons = frr_daemons_for(node.frr_config);
    for (const auto& daemon : daemons) {
      auto argv = in_node(anchor, {(settings.frr_daemons / daemon).string(), "-d", "-F", defaults,
                                   "-u", "frr", "-g", "frr", "-f", "/dev/null", "-i",
                                   "/run/frr/" + daemon + ".pid", "--log",
                                   "file:" + (dir / "log" / (daemon + ".log")).string()});
      if (auto done = run(argv, settings.frr_start_timeout); !done.ok())
        return node.name + ": " + done.error();
    }
    const auto until = std::chrono::steady_clock::now() + settings.frr_start_timeout;
    auto sockets_ready = [&] {
      for (const auto& daemon : daemons)
        if (!fs::exists(dir / "run" / (daemon + ".vty"))) return false;
      return true;
    };
    while (!sockets_ready() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!sockets_ready())
      return node.name + ": FRR's vty sockets did not appear within " +
             format_duration(settings.frr_start_timeout) + " (see " + (dir / "log").string() + ")";
    if (auto done = run(in_node(anchor, {"vtysh", "-b"}), settings.frr_start_timeout); !done.ok())
      return node.name + ": loading the captured configuration: " + done.error();
    // As in the lab: bfdd keeps its timers when the machine is busy.
    if (std::find(daemons.begin(), daemons.end(), "bfdd") != daemons.end()) {
      std::ifstream pid_file(dir / "run" / "bfdd.pid");
      std::string bfdd;
      if (pid_file >> bfdd)
        (void)run({"chrt", "--all-tasks", "--rr", "--pid", "50", bfdd}, timeout);
    }
  }
  return fabric;
}

std::vector<std::string> unconnected_peer_names(const TwinNode& node) {
  std::set<std::string> taken;
  for (const auto& interface : node.interfaces) taken.insert(interface.name);
  std::vector<std::string> names;
  int next = 1;
  for (const auto& interface : node.interfaces) {
    if (interface.kind != TwinInterface::Kind::dummy) continue;
    std::string name;
    do name = std::string(kUnconnectedPeerPrefix) + std::to_string(next++);
    while (taken.contains(name));
    names.push_back(name);
  }
  return names;
}

namespace {

// The most a command in a twin node may print on each stream before it is stopped, as an SSH
// session's default output limit: a twin node's tables are small, and a runaway command must
// not fill the controller's memory.
constexpr std::size_t kTwinOutputLimit = std::size_t{64} << 20;

class NamespaceShell final : public ssh::RemoteShell {
 public:
  explicit NamespaceShell(pid_t anchor) : anchor_(anchor) {}

  Expected<ssh::CommandResult, ssh::SshFailure> run(const std::string& command,
                                                    Duration deadline) override {
    return run_with(in_node(anchor_, {"/bin/sh", "-c", command}), "", deadline);
  }
  Expected<ssh::CommandResult, ssh::SshFailure> run_via_stdin(const std::string& command,
                                                              Duration deadline) override {
    return run_with(in_node(anchor_, {"/bin/sh", "-s"}), ssh::stdin_script(command), deadline);
  }

 private:
  Expected<ssh::CommandResult, ssh::SshFailure> run_with(std::vector<std::string> argv,
                                                         std::string input, Duration deadline) {
    ChildRequest request;
    request.argv = std::move(argv);
    request.input = std::move(input);
    request.deadline = deadline;
    request.max_output = kTwinOutputLimit;
    ssh::CommandResult result;
    result.started_at = now_utc();
    const auto started = std::chrono::steady_clock::now();
    auto ran = run_child(request);
    result.duration = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started);
    if (!ran.ok())
      return ssh::before_sending(
          ssh::SshFailure{ssh::SshFailure::Kind::rejected, "twin: " + ran.error().message});
    if (ran->timed_out)
      return ssh::SshFailure{ssh::SshFailure::Kind::timeout,
                             "timed out after " + format_duration(deadline) + " (on the twin)"};
    if (ran->output_too_large)
      return ssh::SshFailure{ssh::SshFailure::Kind::output_too_large,
                             "stopped after " + std::to_string(kTwinOutputLimit) +
                                 " bytes of output (the twin's limit)"};
    result.exit_status = ran->exit_status;
    result.stdout_text = std::move(ran->out);
    result.stderr_text = std::move(ran->err);
    return result;
  }

  pid_t anchor_;
};

}  // namespace

Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> NamespaceConnector::connect(
    const ssh::SshDevice& device, ssh::CredentialRole role) {
  (void)role;
  pid_t anchor = fabric_.anchor_of(device.name);
  if (anchor == 0)
    return ssh::before_sending(ssh::SshFailure{ssh::SshFailure::Kind::unreachable,
                                               device.name + " is not part of the twin"});
  return std::unique_ptr<ssh::RemoteShell>(new NamespaceShell(anchor));
}

}  // namespace fabgate::pipeline::twin
