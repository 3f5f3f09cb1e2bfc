#pragma once

// The intent model: plain types for what an intent repository says, after validation. Loading
// and validation live in loader.h; nothing here talks to git, YAML or the network.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/core/diagnostics.h"
#include "adapters/core/duration.h"
#include "adapters/core/time.h"

namespace fabgate::intent {

// ---- fabgate.yaml ---------------------------------------------------------------------------

struct SshSettings {
  std::string known_hosts;  // empty: the user's ~/.ssh/known_hosts
  std::string config;       // SSH config file; empty: ~/.ssh/config and /etc/ssh/ssh_config; "none"
  Duration connect_timeout{5'000};
  Duration command_timeout{30'000};
  int parallelism = 64;  // devices contacted at once
  // Each new session times a trivial command first (docs/ssh.md "Slow login shells").
  Duration shell_startup_timeout{10'000};
  Duration slow_shell_startup{1'000};
};

struct ApprovalPolicy {
  int min_approvals = 0;
  bool require_rehearsal = false;
  std::string allowed_signers = "policies/allowed_signers";
  // An approval signed longer ago than this does not count; none: approvals do not expire.
  std::optional<Duration> max_age;
  // The ref the approval policy, allowed_signers and exceptions register are read from
  // (docs/approvals.md "Where the policy comes from"). Honoured only as written at the
  // repository's main (or master) branch, never as written in the change's own commit;
  // empty: that branch itself.
  std::string policy_ref;
  // The change's commit must carry an SSH signature that verifies (namespace "git") against
  // allowed_signers at the trusted ref; self-approval is then judged by that signer, not by
  // the commit's author and committer e-mails, which anyone can set.
  bool require_signed_commits = false;
};

// Where the built-in probes (fabgate-probe) live on hosts, and the port their responders use.
struct ProbeSettings {
  std::string binary = "fabgate-probe";
  int port = 7447;
};

// Where the per-device locks and confirm-timer jobs live ON EACH DEVICE (docs/reliability.md).
struct SafeguardSettings {
  std::string lock_dir = "/var/tmp/fabgate-locks";
  std::string timer_dir = "/var/tmp/fabgate-confirm";
};

// An HTTP API fabgate reads (Prometheus) or writes silences to (Alertmanager).
struct MonitoringEndpoint {
  std::string url;          // http://127.0.0.1:9090; https needs ca_file unless tls_insecure_lab
  std::string ca_file;      // TLS trust anchor (path on the controller)
  std::string token_env;    // environment variable holding a bearer token; its value is redacted
  Duration timeout{5'000};  // every request, connect included
  SourceLocation where;
};

// docs/monitoring.md. The series template turns a device into a label matcher: {{name}} is the
// inventory name, {{mgmt}} its SSH host, {{label.KEY}} one of its labels.
struct PrometheusSettings {
  MonitoringEndpoint endpoint;
  std::string series = "instance=\"{{mgmt}}:9100\"";
  Duration max_age{60'000};  // a sample older than this is stale
  // Metrics whose newest sample every target must have, fresh, before and after the change
  // (besides `up`).
  std::vector<std::string> fresh;
  // The series and label that carry the identity the source reports; empty metric: not checked.
  std::string identity_metric = "node_uname_info";
  std::string identity_label = "nodename";
};

struct AlertmanagerSettings {
  MonitoringEndpoint endpoint;
  // The label of an alert that names the device (matched against the inventory name); the
  // device's inventory labels listed in failure_domain widen the match (an alert on its rack).
  std::string device_label = "device";
  std::vector<std::string> failure_domain;  // inventory label keys, e.g. [rack, pod]
  bool silence = true;                      // silence the targets during the change window
};

struct MonitoringSettings {
  std::optional<PrometheusSettings> prometheus;
  std::optional<AlertmanagerSettings> alertmanager;
};

// `coordination:` (docs/coordination.md): the etcd cluster the controllers that change this
// fabric share, for redundancy budgets. Read from the trusted policy ref, like the approval
// policy: a change that pointed it at an empty etcd would escape every budget.
struct CoordinationSettings {
  std::vector<std::string> endpoints;  // etcd client URLs: http://10.255.0.1:2379
  std::string prefix;                  // this fabric's keys: /fabgate/pod-a
  std::string ca_file;                 // TLS trust anchor for https endpoints; empty: system's
  std::string cert_file;               // TLS client certificate and key (both or neither)
  std::string key_file;
  std::string username;              // etcd user (https only unless lab_plain_http_auth)
  std::string password_env;          // environment variable holding its password
  bool lab_plain_http_auth = false;  // lab only: username and password over http
  Duration timeout{2'000};           // each etcd call on one endpoint
  Duration lease_ttl{15'000};        // the run's lease; kept alive every third of it
  SourceLocation where;

  bool operator==(const CoordinationSettings& other) const {
    return endpoints == other.endpoints && prefix == other.prefix && ca_file == other.ca_file &&
           cert_file == other.cert_file && key_file == other.key_file &&
           username == other.username && password_env == other.password_env &&
           lab_plain_http_auth == other.lab_plain_http_auth && timeout == other.timeout &&
           lease_ttl == other.lease_ttl;
  }
};

// `twin:` in fabgate.yaml (docs/twin.md, "Settings"): every change is first tried on a twin of
// the fabric around its targets, built on the controller. Read from the trusted ref when a
// command acts on devices: the change's own commit cannot turn it off.
struct TwinSettings {
  bool enabled = true;                 // `twin:` present and not `enabled: false`
  int radius = 1;                      // LLDP hops out from the targets
  Duration converge_timeout{60'000};   // the twin reaching production's sessions
  std::string state_dir = "/run/fabgate-twin";
  bool operator==(const TwinSettings& other) const {
    return enabled == other.enabled && radius == other.radius &&
           converge_timeout == other.converge_timeout && state_dir == other.state_dir;
  }
};

struct Settings {
  std::string inventory = "inventory.yaml";
  std::string changes_dir = "changes";
  std::string policies_dir = "policies";
  std::string evidence_dir = "evidence";
  SshSettings ssh;
  ApprovalPolicy approval;
  ProbeSettings probes;
  SafeguardSettings safeguards;
  Duration snapshot_max_age{600'000};  // a snapshot older than this is stale (no-evidence)
  std::vector<std::string> rule_sets = {"fabric-default"};  // applied to every change
  // Names of environment variables whose values are secrets (API tokens, BGP passwords the
  // steps use...): their values are redacted from evidence, logs and the terminal. The values
  // themselves never live in the intent repository.
  std::vector<std::string> secret_env;
  MonitoringSettings monitoring;
  std::optional<CoordinationSettings> coordination;
  std::optional<TwinSettings> twin;  // absent: changes go to production untried
  SourceLocation where;
};

// ---- inventory.yaml -------------------------------------------------------------------------

// An SSH login. Only keys or an agent: passwords are never read from files.
struct Credential {
  std::string user;
  std::string identity_file;  // empty: agent and ~/.ssh/config only
  bool use_agent = true;
};

struct SshEndpoint {
  std::string host;  // address or a Host alias from ~/.ssh/config
  int port = 0;      // 0: from ~/.ssh/config, else 22
};

struct GnmiEndpoint {
  std::string host;
  int port = 9339;
  bool tls = true;              // plaintext only when the inventory says so explicitly
  std::string ca_file;          // TLS trust anchor; empty: the system's trust store
  std::string cert_file;        // optional client certificate
  std::string key_file;         // its key
  std::string tls_server_name;  // name checked in the server certificate; empty: the host
  std::string credentials_env;  // env var prefix holding username/password, outside the repo
  // Lab only: send credentials_env's username and password over plaintext (tls: false), which
  // is refused otherwise; every command that loads the inventory warns about it.
  bool lab_insecure_plaintext_credentials = false;
  // Largest gNMI reply accepted, in bytes (docs/gnmi.md "Reply size limit"); unset: the
  // client's default, sized for a whole route table (gnmi::kDefaultMaxReceiveMessageSize).
  std::optional<std::int64_t> max_receive_message_size;
};

// What a device must say it is (docs/monitoring.md "Identity"): checked against the identity
// every snapshot collects, so an address that now answers as another device is caught. Empty
// fields are not checked; a declared field the device's sources do not collect is no-evidence.
struct ExpectedIdentity {
  std::string hostname;
  std::string serial;
  std::string system_mac;  // lower case, colon separated
  SourceLocation where;
};

struct Device {
  std::string name;
  std::string platform;  // collector profile: frr, linux, sonic, ...
  std::string role;      // spine, leaf, host, gpu-host, ...
  SshEndpoint ssh;
  std::optional<GnmiEndpoint> gnmi;
  Credential read;                          // snapshots and probes
  Credential change;                        // steps and rollback
  std::vector<std::string> data_addresses;  // data-plane addresses probes send to
  std::map<std::string, std::string> labels;
  std::optional<ExpectedIdentity> identity;  // none: identity is collected but not checked
  SourceLocation where;
};

struct Inventory {
  std::vector<Device> devices;
  const Device* find(const std::string& name) const;
};

// ---- changes/*.yaml -------------------------------------------------------------------------

struct Window {
  TimePoint start;
  TimePoint end;
};

struct Bounds {
  int max_targets = 1;
  Duration step_timeout{60'000};
  Duration deadline{900'000};
  std::vector<std::vector<std::string>> waves;  // empty: one wave with every target
  // How long one rollback step may take (a rollback step's own `timeout` still wins). Unset:
  // default_rollback_timeout(step_timeout). A rollback that times out leaves a device in an
  // unknown state (exit 5), the worst outcome there is, and it runs exactly when the device is
  // busiest (converging after the failed change), so it gets more patience than a change step.
  std::optional<Duration> rollback_timeout;

  Duration effective_rollback_timeout() const;
};

// Three times the step timeout, and never under a minute.
Duration default_rollback_timeout(Duration step_timeout);

// One action on one device. Exactly one of `run` (a shell command over SSH with the change
// credential) or `gnmi_set` (operations for the gNMI adapter) is set.
struct GnmiSetOperation {
  std::string op;     // update | replace | delete
  std::string path;   // /interfaces/interface[name=eth1]/config/mtu
  std::string value;  // JSON text; empty for delete
};

struct Step {
  std::string device;
  std::string description;
  std::string run;
  std::vector<GnmiSetOperation> gnmi_set;
  std::optional<Duration> timeout;  // default: bounds.step_timeout
  SourceLocation where;
};

// An acceptance or baseline probe. `run` is a command executed on `host` over SSH with the read
// credential; its exit status is the verdict. Built-in probe kinds (flows, rdma) add fields.
struct Probe {
  std::string name;
  std::string layer = "forwarding";
  std::string host;              // collective: rank 0's host
  std::string kind = "command";  // command | flows | rdma | collective | promql
  std::string run;
  // promql: `query` ({{series}} is the host's label matcher), judged by `expect` ("< 5",
  // "== 0") on every value; `range`: over the change window instead of at one instant.
  std::string query;
  std::string expect;
  bool range = false;
  bool empty_is_zero = false;  // an empty answer reads as 0 instead of no-evidence
  std::string target;          // far end for flows / rdma probes
  int flows = 0;
  int size = 0;        // flows: payload bytes, sent with don't-fragment set; 0: the default
  // flows: udp | tcp | icmp (fabgate-probe flows --proto). A filter that drops one protocol
  // leaves the others' probes green, so a change probes the protocols its workloads use.
  std::string protocol = "udp";
  std::string source;  // flows: the host's address to send from (e.g. its overlay address)
  Duration timeout{30'000};
  // kind: collective: one rank per host, in this order (from `hosts`, or every device of
  // `role` in inventory order), and how they exchange and are judged (docs/probes.md).
  std::vector<std::string> hosts;
  std::string pattern = "ring";            // ring | all-to-all
  std::int64_t collective_size = 1 << 20;  // `size` of a collective: bytes per rank and iteration
  int iterations = 200;
  std::string transport = "tcp";  // tcp | rdma
  double max_tail_ratio = 3.0;    // each rank's p99 over the median p99 of the faster half
  std::optional<Duration> max_p99;
  Duration tail_floor{5};  // the reference p99 the ratio divides by is at least this
  SourceLocation where;
};

// A continuous probe that runs from before execute until acceptance ends; the longest
// interruption any of its flows saw is judged against max_disruption. `interval` is the
// resolution of that figure (fabgate-probe watch --interval, docs/probes.md).
struct WatchProbe {
  std::string host;
  std::string target;
  int flows = 8;
  Duration max_disruption{0};
  Duration interval{20};
  SourceLocation where;
};

// A session that comes back and resets a few seconds later (an OPEN accepted, then a
// NOTIFICATION on the first UPDATE), or a link that renegotiates right after the rollback,
// shows within this long.
inline constexpr Duration kDefaultRestoreDwell{5000};

struct Acceptance {
  Duration settle{0};
  std::vector<Probe> probes;  // before the change (baseline) and after settle
  std::optional<WatchProbe> during;
  // Alert names this change may raise on its targets without failing acceptance
  // (docs/monitoring.md "Acceptance").
  std::vector<std::string> expected_alerts;
  // Telemetry (docs/gnmi.md "Gaps and flaps"): flaps and disappearances this change is known
  // to cause, each "DEVICE:INTERFACE" or "DEVICE:bgp ADDRESS"; any other fails the telemetry
  // gate.
  std::vector<std::string> expected_flaps;
  // The longest silence of a telemetry source that is not a gap (default: 3 sampling
  // intervals, at least 2 s).
  std::optional<Duration> telemetry_max_gap;
  // After a rollback, how long the restored state must hold: the restore is verified when a
  // round matches the baseline and a second round taken this long after it matches too, with
  // no state change on the telemetry streams in between (docs/pipeline.md settle-restored).
  // 0 s: one matching round verifies the restore.
  Duration restore_dwell = kDefaultRestoreDwell;
};

// A difference the change is expected to make: elements matching `path` on `device` are
// checked against `values` instead of no-change.
struct ExpectedDifference {
  std::string device;               // device name or "*"
  std::string path;                 // relative to the device: bgp.peers.*.state
  std::vector<std::string> values;  // allowed post values; empty: any post value
  bool absent = false;              // the element is expected to disappear
  SourceLocation where;
};

struct CompareSection {
  std::vector<std::string> rule_sets;  // in addition to Settings::rule_sets
  std::vector<ExpectedDifference> expected;
};

struct Change {
  std::string id;
  std::string title;
  std::string file;  // path inside the intent root
  std::vector<std::string> targets;
  std::optional<Window> window;
  Bounds bounds;
  std::optional<Duration> confirm_timeout;
  std::vector<Step> steps;
  std::vector<Step> rollback;
  Acceptance acceptance;
  CompareSection compare;
  // Gates the change says on purpose it does not want, each with why: "compat" (no version
  // matrix applies to these targets), "probes" (no service to probe) and "twin" (a twin that
  // cannot be built or does not converge does not refuse it; one that disproves it still does). Without such a line a
  // gate that makes no real check is no-evidence (docs/pipeline.md "Real checks").
  std::map<std::string, std::string> not_wanted;
  // Targets the change leaves out of service once it is accepted (a drain) and targets it
  // returns to service (an undrain). With a coordination store the budgets count a device out
  // of service from the accepted run that left it out until one that returns it is accepted
  // (docs/coordination.md "Devices out of service").
  std::vector<std::string> out_of_service;
  std::vector<std::string> back_in_service;
  SourceLocation where;
};

// The gates `not_wanted` may name.
inline const std::vector<std::string>& not_wantable_gates() {
  static const std::vector<std::string> gates = {"compat", "probes", "twin"};
  return gates;
}

// ---- the whole repository at one commit -----------------------------------------------------

struct CommitInfo {
  std::string id;
  std::string author_name;
  std::string author_email;
  std::string committer_name;
  std::string committer_email;
  TimePoint time;
  std::string summary;
  bool signed_commit = false;
};

// The approval policy as the trusted ref has it, never as the change's commit has it: what
// the approval gate counts approvals under and where the exceptions register comes from. The
// commands that act on devices fill it in (gates/app/trusted_policy.h).
struct TrustedPolicy {
  std::string source;  // "main at 1a2b3c4d5e6f (parent of the change's commit 9f8e...)"
  std::string commit;  // the commit the policy was read from
  ApprovalPolicy approval;
  std::optional<std::string> allowed_signers;        // its text there; nullopt: not in that commit
  std::string exceptions_path;                       // relative to the intent root
  std::optional<std::string> exceptions;             // the register's text there; nullopt: none
  std::string budgets_path;                          // relative to the intent root
  std::optional<std::string> budgets;                // policies/budgets.yaml there; nullopt: none
  std::optional<CoordinationSettings> coordination;  // fabgate.yaml's coordination there
  std::optional<TwinSettings> twin;                  // fabgate.yaml's twin there
  // The collector profiles there (collectors_dir/NAME.yaml), text by file path: the twin runs
  // its collectors on the controller, as root, so it takes them from here, never from the
  // change's commit (docs/security.md).
  std::string collectors_dir;  // "<policies>/collectors" there, relative to the intent root
  std::map<std::string, std::string> collector_profiles;
  // Policy files the change's commit edits relative to that commit ("fabgate.yaml approval
  // block: min_approvals 1 -> 0"); such a change needs at least one approval.
  std::vector<std::string> edits;
  // Everyone who authored or committed a commit of the change (the change's commit and every
  // commit between it and the trusted ref's history, `git log BASE..CHANGE`): none of them may
  // approve it. A reviewer's fix-up on top does not make the author an approver.
  struct ChangeMaker {
    std::string email;
    std::string did;     // "authored", "committed"
    std::string commit;  // full id
  };
  std::vector<ChangeMaker> change_makers;
  // Set when there were more commits than fabgate reads between the base and the change: who
  // made the change cannot be told, so no approval counts.
  std::string change_makers_problem;
  // With approval.require_signed_commits: the principal whose key signed the change's commit
  // and that key's fingerprint, or why the signature was not verified.
  std::string commit_signer;
  std::string commit_signing_key;
  std::string signature_problem;
};

struct IntentRepository {
  CommitInfo commit;
  std::string root;  // intent root inside the git repository ("" or "examples/intent")
  Settings settings;
  Inventory inventory;
  std::vector<Change> changes;
  std::vector<std::string> policy_files;  // paths inside the intent root
  // Content of every policy file at the commit, by path, so later gates (compare rule sets,
  // exceptions, compat matrix, allowed signers) read what was committed, not the work tree.
  std::map<std::string, std::string> policy_texts;
  // Set by the commands that act on devices; the approval gate and the exceptions register use
  // it in place of this commit's settings.approval and policy files.
  std::optional<TrustedPolicy> trusted_policy;
  const ApprovalPolicy& approval_policy() const {
    return trusted_policy ? trusted_policy->approval : settings.approval;
  }
  // The exceptions register in force, as {path, text}: the trusted ref's when it was read
  // (nothing when that ref has none), else this commit's; nullopt when there is none.
  std::optional<std::pair<std::string, std::string>> exceptions_register() const {
    if (trusted_policy) {
      if (!trusted_policy->exceptions) return std::nullopt;
      return std::pair{trusted_policy->exceptions_path, *trusted_policy->exceptions};
    }
    auto found = policy_texts.find(settings.policies_dir + "/exceptions.yaml");
    if (found == policy_texts.end()) return std::nullopt;
    return *found;
  }
  const Change* find_change(const std::string& id_or_file) const;
};

}  // namespace fabgate::intent
