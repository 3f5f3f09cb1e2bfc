#include "tests/faults/fault_fabric.h"

#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>

#include "adapters/core/text.h"
#include "tests/faults/controller_cut.h"
#include "tests/support/temp_dir.h"

namespace fabgate::faults {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::read_file;
using testing::shell_quoted;
using testing::write_file;

const char* kPrefix = "/fabgate/faults";
const char* kBaseline = "mtu 9000";
// Short, so that a stopped or killed run loses it within a schedule (docs/reliability.md).
const char* kLeaseTtl = "3s";
constexpr auto kLeaseLapse = 15s;       // bound on waiting for a lease to lapse
constexpr auto kScheduleBound = 100s;   // bound on the schedule itself (runs, faults, recovers)
constexpr auto kRunBound = 120s;        // bound on one epilogue recover

// Identity only: what the schedules judge is in the devices' own files and logs.
const char* kLightProfile = R"(platform: linux
sources:
  - category: identity
    timeout: 10s
    commands:
      - {run: hostname, parse: hostname}
      - {run: uname -r, parse: kernel-release}
)";

const char* kOneDevicePerPod =
    "budgets:\n  - name: leaves-per-pod\n    role: leaf\n    per: pod\n    max_in_change: 1\n";

// kill(2) for one process of the schedule; never for pid 0 or -1 (a process group, every process).
void send(pid_t pid, int signal) {
  if (pid > 0) ::kill(pid, signal);
}

std::int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string group_of(const std::string& device) {
  return device == "d1" || device == "d2" ? "pod=p1" : "pod=p2";
}

// The device-side commands. Each reads the device's fence (`<token> <run> <generation>`, what
// the device-side lock last accepted) inside the command the guard let through, and appends
// one line to the device's own log before it acts, so every accepted command names the run and
// token it ran under; `sent` is the token the guard carried. A step keeps a copy of the
// configuration once per run and appends "<change> <run>"; a rollback restores that run's copy.
std::string read_fence(const std::string& home, const std::string& device) {
  return "t=; r=; g=; read t r g < " + home + "/locks/" + device + ".lock/fence; ";
}
std::string log_line(const std::string& home, const std::string& device, const std::string& kind,
                     const std::string& change) {
  return "echo \"$(date +%s%N) " + kind + " ${t:-0} ${r:-none} ${g:-0} " + change +
         " sent=${fabgate_token:-?}\" >> " + home + "/" + device + ".log; ";
}
std::string step_command(const std::string& home, const std::string& device,
                         const std::string& change) {
  const std::string base = home + "/" + device;
  return read_fence(home, device) + log_line(home, device, "step", change) + "[ -f " + base +
         ".bak-$r ] || cp " + base + ".conf " + base + ".bak-$r; echo \"" + change +
         " $r\" >> " + base + ".conf; if [ -f " + base + ".slow ]; then s=$(cat " + base +
         ".slow); rm -f " + base + ".slow; sleep $s; fi; if [ -f " + base + ".drop ]; then rm -f " +
         base + ".drop; kill -9 $PPID; sleep 5; fi; sleep 1";
}
std::string rollback_command(const std::string& home, const std::string& device,
                             const std::string& change) {
  const std::string base = home + "/" + device;
  return read_fence(home, device) + log_line(home, device, "rollback", change) + "if [ -f " +
         base + ".bak-$r ]; then cp " + base + ".bak-$r " + base + ".conf; fi";
}

std::string change_yaml(const ChangePlan& change, const std::string& home) {
  std::string targets = join(change.targets, ", ");
  std::string yaml = "id: " + change.id + "\ntitle: fault schedule change " + change.id +
                     "\ntargets: [" + targets + "]\nbounds: {max_targets: " +
                     std::to_string(change.targets.size()) +
                     ", step_timeout: 10s, deadline: 2m}\nsteps:\n";
  for (const auto& device : change.targets)
    yaml += "  - device: " + device + "\n    run: '" + step_command(home, device, change.id) + "'\n";
  yaml += "rollback:\n";
  for (const auto& device : change.targets)
    yaml += "  - device: " + device + "\n    run: '" + rollback_command(home, device, change.id) +
            "'\n";
  yaml += "acceptance:\n  restore_dwell: 0s\n  probes:\n    - {name: answers, layer: workload, "
          "host: " +
          change.targets.front() + ", run: \"true\", timeout: 10s}\n";
  return yaml;
}

// A file's text; empty when it does not exist (a device no command reached has no log).
std::string read_if_any(const std::string& path) {
  return std::filesystem::exists(path) ? read_file(path) : "";
}

// The first `budget-release` record of a bundle's journal, as unix ns (its `at`, UTC with
// milliseconds: written just after the release transaction), or kNever.
std::int64_t released_in(const std::filesystem::path& bundle) {
  std::ifstream journal(bundle / "journal.jsonl");
  for (std::string line; std::getline(journal, line);) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || record.value("event", "") != "budget-release") continue;
    std::tm utc{};
    int millis = 0;
    const std::string at = record.value("at", "");
    if (std::sscanf(at.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                    &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis) != 7)
      continue;
    utc.tm_year -= 1900;
    utc.tm_mon -= 1;
    return static_cast<std::int64_t>(::timegm(&utc)) * 1000000000 +
           static_cast<std::int64_t>(millis) * 1000000;
  }
  return kNever;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << s << "s";
  return out.str();
}

// A process of the schedule (a run or a recover) and how it ended.
struct Tracked {
  ChildProcess process;
  bool started = false;
  bool ended = false;
  int exit_code = -1;
  std::int64_t ended_ns = kNever;
  double ended_s = 0;
  std::string log;

  // Reaps it when it ended; true once it has.
  bool poll(double now_s) {
    if (ended || !started) return ended;
    if (auto status = process.reap()) {
      ended = true;
      exit_code = *status;
      ended_ns = unix_ns();
      ended_s = now_s;
    }
    return ended;
  }
};

struct LiveRun {
  RunPlan plan;
  Tracked run;
  std::string folder;  // its controller's intent folder
  std::string id;
  std::filesystem::path bundle;
  bool killed = false;
  bool hung = false;
  double first_step_s = -1;  // when a device first logged a step of it
  Tracked recover;  // the recover that took it over, if any
  std::string recover_how;
};

class FaultFabric : public testing::CoordinatedEndToEnd {
 public:
  void TestBody() override {}

  ScheduleResult run(const Schedule& schedule) {
    ScheduleResult result;
    result.schedule = schedule;
    const auto began = std::chrono::steady_clock::now();
    SetUp();
    if (!sshd_ || !etcd_ || IsSkipped()) {
      result.failure = "the fabric did not start (sshd or etcd)";
      return result;
    }
    prepare(schedule);
    if (!failure_.empty()) {
      result.failure = failure_;
    } else {
      drive(schedule);
      epilogue();
      collect(result);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    TearDown();
    return result;
  }

 protected:
  int etcd_members() const override { return 3; }

 private:
  double now_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }
  std::string other_folder(const LiveRun& run) const {
    return run.folder == repo_.path() ? clone_ : repo_.path();
  }
  void note(const std::string& what) { narrative_.push_back(seconds_text(now_s()) + " " + what); }

  void prepare(const Schedule& schedule) {
    inventory_devices_ = {
        {"d1", "{pod: p1}"}, {"d2", "{pod: p1}"}, {"d3", "{pod: p2}"}, {"d4", "{pod: p2}"}};
    for (const auto& [device, labels] : inventory_devices_)
      write_config(device, std::string(kBaseline) + "\n");
    const std::string home = sshd_->home();
    repo_.write("policies/budgets.yaml", kOneDevicePerPod);
    repo_.write("policies/collectors/linux.yaml", kLightProfile);
    for (const auto& change : change_catalogue())
      if (change.id != "c") repo_.write("changes/" + change.id + ".yaml", change_yaml(change, home));
    // commit_intent writes change c itself (changes/c.yaml) and commits everything.
    commit_intent(change_yaml(change_named("c"), home),
                  "coordination:\n  endpoints: [" + join(etcd_->endpoints(), ", ") +
                      "]\n  prefix: " + kPrefix + "\n  lease_ttl: " + kLeaseTtl + "\n");
    second_.emplace("fabgate-faults-ctl-b");
    clone_ = second_controller(second_->path());
    if (clone_.empty()) {
      failure_ = "git clone of the intent repository failed";
      return;
    }
    std::vector<int> ports;
    for (int i = 0; i < 3; ++i) ports.push_back(etcd_->member(i).client_port);
    cut_ = std::make_unique<ControllerCut>(ports);
    if (!cut_->failure().empty()) {
      failure_ = "cannot cut a controller off: " + cut_->failure();
      return;
    }
    for (const auto& plan : schedule.runs) {
      LiveRun live;
      live.plan = plan;
      live.folder = plan.controller == 0 ? repo_.path() : clone_;
      live.run.log = live.folder + "/run-" + plan.change + ".log";
      runs_.push_back(std::move(live));
    }
    for (const auto& fault : schedule.faults) {
      if (fault.kind == FaultKind::drop_session) write_file(home + "/" + fault.device + ".drop", "");
      if (fault.kind == FaultKind::slow_step)
        write_file(home + "/" + fault.device + ".slow", std::to_string(fault.hold_s) + "\n");
    }
  }

  // The run id of a run, from the bundle folder its controller made for its change (the first
  // one that is not another run's).
  void find_id(LiveRun& live) {
    if (!live.id.empty()) return;
    const std::filesystem::path root = live.folder + "/evidence-out/" + live.plan.change;
    std::error_code error;
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(root, error))
      found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    for (const auto& bundle : found) {
      const std::string id = run_id_of(bundle);
      bool others = false;
      for (const auto& run : runs_) others = others || (&run != &live && run.id == id);
      if (others) continue;
      live.id = id;
      live.bundle = bundle;
      return;
    }
  }

  bool lease_lapsed(const LiveRun& live) {
    if (live.id.empty()) return false;
    try {
      auto client = etcd::testing::open_client(etcd_->endpoints(), 2s);
      auto alive = client.get(std::string(kPrefix) + "/runs/" + live.id + "/alive");
      return alive && alive->kvs.empty();
    } catch (const std::exception&) {
      return false;
    }
  }

  void start_recover(LiveRun& live, const std::string& folder, const std::string& target,
                     const std::string& how) {
    live.recover = Tracked();
    live.recover.log = folder + "/recover-" + live.plan.change + "-" +
                       std::to_string(recover_count_++) + ".log";
    const std::string controller = folder == repo_.path() ? "ctl-a" : "ctl-b";
    live.recover.process = start_fabgate_in(
        folder, "recover " + shell_quoted(target) + " --operator faults --controller " + controller,
        live.recover.log);
    live.recover.started = true;
    live.recover_how = how;
    note("recover " + target + " from " + controller + " (" + how + ")");
  }

  // One fault's progress; true once it is done.
  struct FaultState {
    Fault fault;
    int phase = 0;
    double mark = 0;
    int member = -1;
    bool done = false;
  };

  // A fault timed from a run's first step does nothing when the run ended without one (refused,
  // or it never reached a device); true then, and the fault is done. Until the run has a step,
  // the fault waits.
  bool void_without_step(FaultState& state, const LiveRun& live) {
    if (live.first_step_s >= 0) return false;
    if (live.run.ended) {
      note("run" + std::to_string(state.fault.run) + " ended without a step: its fault is void");
      state.done = true;
    }
    return true;
  }

  // When each run's first step reached a device: the first log line of a step naming it.
  void find_first_steps() {
    std::string logs;
    for (const auto& [device, labels] : inventory_devices_)
      logs += read_if_any(sshd_->home() + "/" + device + ".log");
    for (auto& live : runs_)
      if (live.first_step_s < 0 && !live.id.empty() &&
          logs.find(" step ") != std::string::npos) {
        std::istringstream lines(logs);
        for (std::string line; std::getline(lines, line);)
          if (line.find(" step ") != std::string::npos &&
              line.find(" " + live.id + " ") != std::string::npos) {
            live.first_step_s = now_s();
            break;
          }
      }
  }

  void step(FaultState& state) {
    const Fault& fault = state.fault;
    const double now = now_s();
    LiveRun* live = fault.run < static_cast<int>(runs_.size()) ? &runs_[fault.run] : nullptr;
    const bool running = live != nullptr && live->run.started && !live->run.ended;
    switch (fault.kind) {
      case FaultKind::drop_session:
      case FaultKind::slow_step:
        state.done = true;
        return;
      case FaultKind::kill_etcd_leader:
        if (state.phase == 0 && now >= fault.at_s) {
          state.member = etcd_->leader();
          if (state.member >= 0) etcd_->kill(state.member);
          note("etcd leader " + std::to_string(state.member) + " SIGKILLed");
          state.mark = now;
          state.phase = 1;
        } else if (state.phase == 1 && now >= state.mark + fault.hold_s) {
          if (state.member >= 0) etcd_->restart(state.member);
          note("etcd member " + std::to_string(state.member) + " restarted");
          state.done = true;
        }
        return;
      case FaultKind::cut_from_etcd:
        if (state.phase == 0 && void_without_step(state, *live)) return;
        if (state.phase == 0 && now >= live->first_step_s + fault.at_s) {
          if (!running) {
            state.done = true;
            return;
          }
          const std::string error = cut_->cut(live->run.process.pid());
          note("run" + std::to_string(fault.run) + " cut from etcd" + (error.empty() ? "" : ": " + error));
          state.mark = now;
          state.phase = 1;
        } else if (state.phase == 1 && now >= state.mark + fault.hold_s) {
          if (running) cut_->heal(live->run.process.pid());
          note("run" + std::to_string(fault.run) + " reaches etcd again");
          state.done = true;
        }
        return;
      case FaultKind::kill_and_recover:
        if (state.phase == 0 && void_without_step(state, *live)) return;
        if (state.phase == 0 && now >= live->first_step_s + fault.at_s) {
          if (!running) {
            state.done = true;
            return;
          }
          find_id(*live);
          send(live->run.process.pid(), SIGKILL);
          live->killed = true;
          note("run" + std::to_string(fault.run) + " SIGKILLed");
          state.mark = now;
          state.phase = 1;
        } else if (state.phase == 1 && live->run.ended &&
                   (lease_lapsed(*live) || now >= state.mark + kLeaseLapse.count())) {
          if (live->id.empty()) {
            note("run" + std::to_string(fault.run) + " left no bundle: nothing to recover");
            state.done = true;
            return;
          }
          start_recover(*live, other_folder(*live), live->id, "after SIGKILL");
          state.phase = 2;
        } else if (state.phase == 2 && live->recover.ended) {
          state.done = true;
        }
        return;
      case FaultKind::stop_past_lease:
        if (state.phase == 0) {
          if (live == nullptr || live->run.ended) {
            state.done = true;
            return;
          }
          const bool hooked = fault.at_s < 0;
          if (hooked && running && testing::process_state(live->run.process.pid()) == 'T') {
            note("run" + std::to_string(fault.run) + " stopped itself at its stop hook");
          } else if (!hooked && void_without_step(state, *live)) {
            return;
          } else if (!hooked && running && live->first_step_s >= 0 &&
                     now >= live->first_step_s + fault.at_s) {
            send(live->run.process.pid(), SIGSTOP);
            note("run" + std::to_string(fault.run) + " SIGSTOPped");
          } else {
            return;
          }
          find_id(*live);
          state.mark = now;
          state.phase = 1;
        } else if (state.phase == 1 &&
                   (lease_lapsed(*live) || now >= state.mark + kLeaseLapse.count())) {
          if (fault.recover_while_stopped && !live->id.empty()) {
            start_recover(*live, other_folder(*live), live->id, "while the run is stopped");
            state.mark = now;
            state.phase = 2;
          } else {
            state.phase = 3;
          }
        } else if ((state.phase == 2 && (live->recover.ended || (fault.wake_during_recover &&
                                                                 now >= state.mark + 1.0))) ||
                   (state.phase == 3 && now >= state.mark + fault.hold_s)) {
          send(live->run.process.pid(), SIGCONT);
          note("run" + std::to_string(fault.run) + " SIGCONTed");
          state.done = true;
        }
        return;
    }
  }

  void drive(const Schedule& schedule) {
    started_ = std::chrono::steady_clock::now();
    std::vector<FaultState> faults;
    for (const auto& fault : schedule.faults) faults.push_back({fault});
    while (std::chrono::steady_clock::now() - started_ < kScheduleBound) {
      const double now = now_s();
      bool busy = false;
      for (std::size_t i = 0; i < runs_.size(); ++i) {
        auto& live = runs_[i];
        if (!live.run.started && now >= live.plan.start_s) {
          const std::string environment =
              live.plan.stop_before_step == 0
                  ? ""
                  : "FABGATE_FAULT_STOP_BEFORE_STEP=" + std::to_string(live.plan.stop_before_step);
          live.run.process = start_fabgate_in(
              live.folder,
              "apply " + live.plan.change + " --operator faults --controller " +
                  controller_name(live.plan.controller) + (live.plan.wait ? " --wait 20s" : ""),
              live.run.log, environment);
          live.run.started = true;
          note("run" + std::to_string(i) + " started");
        }
        if (live.run.started && !live.run.ended) {
          find_id(live);
          if (live.run.poll(now))
            note("run" + std::to_string(i) + " (" + live.id + ") exited " +
                 std::to_string(live.run.exit_code));
        }
        live.recover.poll(now);
        busy = busy || !live.run.ended || (live.recover.started && !live.recover.ended);
      }
      find_first_steps();
      for (auto& fault : faults) {
        if (!fault.done) step(fault);
        busy = busy || !fault.done;
      }
      if (!busy) return;
      std::this_thread::sleep_for(50ms);
    }
    note("the schedule's bound passed; the epilogue ends it");
    // Heal what a fault left: a stopped run woken, a cut one reconnected, a member restarted.
    for (auto& fault : faults) {
      if (fault.done) continue;
      if (fault.fault.kind == FaultKind::kill_etcd_leader && fault.phase == 1 && fault.member >= 0)
        etcd_->restart(fault.member);
    }
  }

  // The way out of every schedule: nothing stays stopped or cut, every run ends (a run still
  // going after its bound is SIGKILLed and counted hung), and every run that may have left a
  // device changed (exit 5, killed, hung) is recovered, as its operator would.
  void epilogue() {
    for (auto& live : runs_) {
      if (live.run.started && !live.run.ended && live.run.process.pid() > 0) {
        cut_->heal(live.run.process.pid());
        send(live.run.process.pid(), SIGCONT);
      }
    }
    const auto give_up = std::chrono::steady_clock::now() + kRunBound;
    for (auto& live : runs_) {
      while (live.run.started && !live.run.poll(now_s()) && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(50ms);
      while (live.recover.started && !live.recover.poll(now_s()) &&
             std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(50ms);
      if (live.run.started && !live.run.ended) {
        send(live.run.process.pid(), SIGKILL);
        for (int i = 0; i < 250 && !live.run.poll(now_s()); ++i) std::this_thread::sleep_for(20ms);
        live.hung = true;
        note("run " + live.id + " hung: SIGKILLed");
      }
      if (live.recover.started && !live.recover.ended) {
        send(live.recover.process.pid(), SIGKILL);
        for (int i = 0; i < 250 && !live.recover.poll(now_s()); ++i)
          std::this_thread::sleep_for(20ms);
        note("the recover of " + live.id + " hung: SIGKILLed");
      }
      find_id(live);
    }
    for (auto& live : runs_) {
      const int code = live.run.exit_code;
      const bool restored = live.recover.ended && (live.recover.exit_code == 4 ||
                                                   live.recover.exit_code == 3 ||
                                                   live.recover.exit_code == 0);
      if (!live.run.started || live.id.empty() || restored) continue;
      if (code == 5 && !live.recover.started) {
        start_recover(live, live.folder, live.bundle.string(), "its exit-5 hand-off");
      } else if (code == 5 || code >= 128 || live.hung) {
        auto lapse = std::chrono::steady_clock::now() + kLeaseLapse;
        while (!lease_lapsed(live) && std::chrono::steady_clock::now() < lapse)
          std::this_thread::sleep_for(200ms);
        start_recover(live, other_folder(live), live.id, "epilogue");
      } else {
        continue;
      }
      const auto bound = std::chrono::steady_clock::now() + kRunBound;
      while (!live.recover.poll(now_s()) && std::chrono::steady_clock::now() < bound)
        std::this_thread::sleep_for(50ms);
      if (!live.recover.ended) {
        send(live.recover.process.pid(), SIGKILL);
        for (int i = 0; i < 250 && !live.recover.poll(now_s()); ++i)
          std::this_thread::sleep_for(20ms);
      }
      note("recover of " + live.id + " exited " + std::to_string(live.recover.exit_code));
    }
  }

  void collect(ScheduleResult& result) {
    Observation observed;
    observed.budget_of_group = {{"pod=p1", 1}, {"pod=p2", 1}};
    for (const auto& [device, labels] : inventory_devices_) {
      DeviceObservation seen;
      seen.name = device;
      seen.group = group_of(device);
      seen.baseline = {kBaseline};
      seen.log = lines_of(read_if_any(sshd_->home() + "/" + device + ".log"));
      seen.final_config = lines_of(config(device));
      for (const auto& line : seen.log) result.device_logs.push_back(device + ": " + line);
      observed.devices.push_back(seen);
    }
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      const auto& live = runs_[i];
      RunObservation run;
      run.run = live.id.empty() ? "(no bundle)" : live.id;
      run.controller = controller_name(live.plan.controller);
      run.change = live.plan.change;
      run.targets = change_named(live.plan.change).targets;
      run.exit_code = live.hung ? -1 : live.run.exit_code;
      run.ended_ns = live.run.ended_ns;
      if (live.recover.ended) {
        run.recover_exit = live.recover.exit_code;
        run.recover_ended_ns = live.recover.ended_ns;
      }
      if (!live.bundle.empty()) {
        run.released_ns = released_in(live.bundle);
        // A recover from the other controller continues the journal in a bundle of the same
        // name there.
        const std::filesystem::path elsewhere = other_folder(live) + "/evidence-out/" +
                                                live.plan.change + "/" +
                                                live.bundle.filename().string();
        if (live.recover.started)
          run.released_ns = std::min(run.released_ns, released_in(elsewhere));
      }
      if (run.exit_code == 5) run.exit_5_devices = run.targets;
      observed.runs.push_back(run);
      std::string line = "run" + std::to_string(i) + " " + run.controller + " apply " + run.change +
                         ": run " + run.run + " exit " + std::to_string(run.exit_code) + " at " +
                         seconds_text(live.run.ended_s);
      if (live.recover.ended)
        line += "; recover (" + live.recover_how + ") exit " +
                std::to_string(live.recover.exit_code) + " at " + seconds_text(live.recover.ended_s);
      result.narrative.push_back(line);
      // The end of each process's own output: why it exited as it did.
      auto tail = [](const std::string& text) {
        auto lines = lines_of(text);
        std::string out;
        for (std::size_t k = lines.size() > 3 ? lines.size() - 3 : 0; k < lines.size(); ++k)
          out += "\n      | " + lines[k];
        return out;
      };
      result.narrative.back() += tail(read_if_any(live.run.log));
      if (live.recover.ended) result.narrative.back() += tail(read_if_any(live.recover.log));
      result.runs.push_back(run);
    }
    for (const auto& line : narrative_) result.narrative.push_back(line);
    result.violations = check(observed);
  }

  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::optional<testing::TempDir> second_;
  std::string clone_;
  std::unique_ptr<ControllerCut> cut_;
  std::vector<LiveRun> runs_;
  std::vector<std::string> narrative_;
  std::string failure_;
  int recover_count_ = 0;
};

}  // namespace

std::optional<std::string> fault_fabric_unavailable() {
  if (auto why = testing::SshdFixture::unavailable()) return *why;
  if (!std::filesystem::exists(etcd::testing::kEtcd))
    return std::string(etcd::testing::kEtcd) +
           " is missing: scripts/bootstrap --tests installs etcd-server";
  if (!std::filesystem::exists("/usr/bin/etcdctl"))
    return "/usr/bin/etcdctl is missing: scripts/bootstrap --tests installs etcd-client";
  if (auto why = ControllerCut::unavailable()) return *why;
  return std::nullopt;
}

ScheduleResult run_schedule(const Schedule& schedule) {
  // The fabric is a test fixture made for one schedule: its destructor stops sshd and etcd and
  // removes its folders, whatever happened.
  FaultFabric fabric;
  return fabric.run(schedule);
}

std::string report(const ScheduleResult& result) {
  std::string text = describe(result.schedule) + "\n";
  if (!result.failure.empty()) return text + "  no verdict: " + result.failure + "\n";
  text += "  " + std::to_string(result.violations.size()) + " violation(s), " +
          seconds_text(result.seconds) + "\n";
  for (const auto& line : result.narrative) text += "  " + line + "\n";
  for (const auto& violation : result.violations) text += "  " + describe(violation);
  if (!result.violations.empty()) {
    text += "  device logs:\n";
    for (const auto& line : result.device_logs) text += "    " + line + "\n";
  }
  return text;
}

}  // namespace fabgate::faults
