#pragma once

// The gNMI client adapter: Capabilities, Get, Set and Subscribe (ONCE, POLL) against one
// target, with typed failures. No gRPC type appears here, so the pipeline can include this
// header without pulling gRPC into every translation unit.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/gnmi/path.h"

namespace fabgate::gnmi {

struct GnmiFailure {
  enum class Kind {
    unreachable,  // nothing answered at the address (UNAVAILABLE)
    timeout,      // the deadline passed (DEADLINE_EXCEEDED)
    rejected,     // the target refused the request: unknown path, bad value, unsupported
    auth,         // credentials missing or wrong (UNAUTHENTICATED, PERMISSION_DENIED)
    tls,          // certificate files unreadable, handshake or verification failed
    internal,     // anything else, including a reply fabgate cannot read
  };
  Kind kind = Kind::internal;
  // Names device, operation and cause: "gnmi: leaf1 (10.0.0.1:9339): Get
  // /system/state: timed out after 2s".
  std::string message;
  // The target answered UNIMPLEMENTED (kind `rejected`): it does not do what was asked (a
  // subscription mode, an encoding). It says nothing against the target or the paths; any
  // other refusal (NOT_FOUND, INVALID_ARGUMENT, ...) does not set it.
  bool unimplemented = false;
  // For a Set: whether the request may have reached the target. `not_sent` is a proof (the
  // failure came before the Set was written: no connection, TLS, login, or the target did not
  // answer the connection check before it); `sent`, the default, means its fate is unknown.
  enum class Delivery { not_sent, sent };
  Delivery delivery = Delivery::sent;
};

std::string_view to_string(GnmiFailure::Kind kind);

template <class T>
using GnmiResult = Expected<T, GnmiFailure>;

enum class Encoding { json, json_ietf };

// GetRequest.type: which data a Get returns. `config`: read/write data only (the config
// containers and list keys); `state`: read-only data (state containers, applied config
// included); `operational`: read-only data that is not also config (state leaves without a
// counterpart in the sibling config container: counters, oper-status, ...).
enum class DataType { all, config, state, operational };
std::string_view to_string(DataType type);

// One value the target sent. `path` is the full path (notification prefix joined with the
// update's path); `json` is the value as JSON text, whatever TypedValue carried it.
struct GnmiUpdate {
  GnmiPath path;
  std::string json;
};

struct GnmiNotification {
  std::int64_t timestamp_ns = 0;
  std::vector<GnmiUpdate> updates;
  std::vector<GnmiPath> deletes;
};

// One operation of a Set. Mirrors intent::GnmiSetOperation (adapters do not depend on gates):
// `value` is JSON text and is ignored for remove.
struct SetOperation {
  enum class Kind { update, replace, remove };
  Kind kind = Kind::update;
  std::string path;
  std::string value;
};

// "update" | "replace" | "delete" as written in change files.
std::optional<SetOperation::Kind> set_kind_from_name(std::string_view name);
std::string_view to_string(SetOperation::Kind kind);

struct SetResult {
  std::int64_t timestamp_ns = 0;
  std::vector<std::string> applied;  // "update /interfaces/interface[name=eth1]/config/mtu"
};

struct ModelInfo {
  std::string name;
  std::string organization;
  std::string version;
};

struct Capabilities {
  std::string gnmi_version;
  std::vector<ModelInfo> models;
  std::vector<std::string> encodings;  // "JSON", "JSON_IETF", ...
};

// A POLL subscription: next() returns the initial snapshot on its first call and asks for a
// fresh one (a Poll message) on every later call. The session's deadline bounds all of it;
// `round_deadline` bounds one call: a round not answered by then cancels the subscription and
// is a timeout (the session is over; open a new one). A session must not outlive the client
// that opened it.
class GnmiPollSession {
 public:
  virtual ~GnmiPollSession() = default;
  GnmiResult<std::vector<GnmiNotification>> next() { return next(std::nullopt); }
  virtual GnmiResult<std::vector<GnmiNotification>> next(
      std::optional<Duration> round_deadline) = 0;
};

// A STREAM subscription in SAMPLE mode. run() blocks, handing every notification to
// `on_notification` as it arrives, until stop() (from any thread), the session deadline, or a
// failure. Ending by stop() or by the deadline is success; the target closing the stream, or
// anything else, is the failure. A stream must not outlive the client that opened it.
class GnmiStream {
 public:
  virtual ~GnmiStream() = default;
  virtual GnmiResult<Ok> run(
      const std::function<void(const GnmiNotification&)>& on_notification) = 0;
  virtual void stop() = 0;
};

// One gNMI target. An abstract seam so gates and their tests can substitute a fake target;
// the real implementation (connect() below) speaks gRPC. Every call takes a deadline: no RPC
// waits for ever on a silent device.
class GnmiClient {
 public:
  virtual ~GnmiClient() = default;
  virtual GnmiResult<Capabilities> capabilities(Duration deadline) = 0;
  virtual GnmiResult<std::vector<GnmiNotification>> get(const std::vector<std::string>& paths,
                                                        Encoding encoding, DataType type,
                                                        Duration deadline) = 0;
  GnmiResult<std::vector<GnmiNotification>> get(const std::vector<std::string>& paths,
                                                Encoding encoding, Duration deadline) {
    return get(paths, encoding, DataType::all, deadline);
  }
  // One Set RPC: the target applies all operations or none.
  virtual GnmiResult<SetResult> set(const std::vector<SetOperation>& operations,
                                    Duration deadline) = 0;
  virtual GnmiResult<std::vector<GnmiNotification>> subscribe_once(
      const std::vector<std::string>& paths, Encoding encoding, Duration deadline) = 0;
  virtual GnmiResult<std::unique_ptr<GnmiPollSession>> subscribe_poll(
      const std::vector<std::string>& paths, Encoding encoding, Duration session_deadline) = 0;
  // STREAM, every path SAMPLE at `sample_interval`.
  virtual GnmiResult<std::unique_ptr<GnmiStream>> subscribe_stream(
      const std::vector<std::string>& paths, Encoding encoding, Duration sample_interval,
      Duration session_deadline) = 0;
};

// Username and password sent as gRPC metadata ("username", "password"), as gNMI targets expect.
struct GnmiLogin {
  std::string username;
  std::string password;
};

// Credentials come from the environment of the operator or CI job, never from the intent
// repository: <PREFIX>_USERNAME and <PREFIX>_PASSWORD. An empty prefix means no login; a
// prefix whose variables are unset is an auth failure, not an anonymous login.
GnmiResult<std::optional<GnmiLogin>> login_from_environment(std::string_view prefix);

// The largest reply message the client accepts, in bytes. gRPC's own default (4 MiB) is far
// below one Get of a real switch's route table: an AFT ipv4-entry in JSON_IETF is about 125
// bytes as fabgate-gnmid sends it and 250-400 bytes with the counters and metadata vendors
// add, so 500,000 routes are 60-200 MB in one GetResponse (gNMI Get has no paging). 256 MiB
// holds 500,000 entries of up to ~530 bytes each, with margin over the verbose vendor shape;
// the inventory's gnmi.max_receive_message_size raises it per device (a full Internet table,
// or a larger fabric). gRPC allocates only what arrives, so a high limit costs nothing until a
// reply is that large; it bounds what one runaway reply can make fabgate hold.
inline constexpr std::int64_t kDefaultMaxReceiveMessageSize = std::int64_t{256} << 20;
// gRPC takes the limit as an int.
inline constexpr std::int64_t kMaxReceiveMessageSizeCeiling = 2'147'483'647;

struct GnmiClientOptions {
  std::string device;           // for messages only
  std::string address;          // "host:port" or "unix:/path"
  bool tls = true;              // plaintext only when the inventory says so for this device
  std::string ca_file;          // empty: the system's trust store
  std::string cert_file;        // optional client certificate ...
  std::string key_file;         // ... and its key
  std::string tls_server_name;  // name checked in the server certificate; empty: from address
  std::optional<GnmiLogin> login;
  // A reply larger than this (one GetResponse, one SubscribeResponse) fails with `internal`
  // and a message naming the device, the operation, both sizes and the inventory option that
  // raises the limit. 1 .. kMaxReceiveMessageSizeCeiling.
  std::int64_t max_receive_message_size = kDefaultMaxReceiveMessageSize;
};

// Builds the channel (lazily connected; nothing is sent yet). Fails with `tls` when a
// certificate file cannot be read.
GnmiResult<std::unique_ptr<GnmiClient>> connect(const GnmiClientOptions& options);

}  // namespace fabgate::gnmi
