#pragma once

// etcd v3 through its HTTP/JSON gateway (the /v3/... paths etcd 3.4 serves on its client URLs),
// over the monitoring adapters' libcurl client: every call has a hard deadline, no proxy, no
// redirect, TLS verified against the configured CA, a bounded answer. Keys and values are bytes
// (base64 on the wire); the answer is read with typed, depth-limited lookups, so an answer of
// another shape is a bad_answer naming the field, never a throw. docs/coordination.md.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"
#include "adapters/prom/http_client.h"

namespace fabgate::etcd {

struct EtcdSettings {
  std::vector<std::string> endpoints;  // client URLs, tried in order: http://10.0.0.1:2379
  std::string ca_file;                 // TLS trust anchor; empty: the system's
  std::string cert_file;               // TLS client certificate (PEM); empty: none
  std::string key_file;                // its key (PEM); set both or neither
  std::string username;                // etcd user; empty: no authentication
  std::string password_env;            // the environment variable holding its password
  bool lab_plain_http_auth = false;    // allow username/password over http:// (lab only)
  Duration timeout{5'000};             // each attempt on one endpoint, connect included
};

struct EtcdFailure {
  enum class Kind {
    unreachable,  // every endpoint refused, reset or could not be resolved (or a TLS failure)
    timeout,      // the last endpoint tried did not answer within the timeout
    rejected,     // etcd answered with an error: `code` (a gRPC code) and its message
    bad_answer,   // the answer is not what etcd's API says: `field` names what is wrong
    auth,         // credentials missing, refused, or not allowed over plain http
    settings,     // the settings cannot work (no endpoint, a certificate without its key)
  };
  Kind kind = Kind::unreachable;
  std::string message;  // "POST http://127.0.0.1:2379/v3/kv/range: connection refused"
  int code = 0;         // rejected: etcd's gRPC status code (5 not found, 9 failed precondition)
  std::string field;    // bad_answer: "header.revision", "kvs[0].key"
};
std::string_view to_string(EtcdFailure::Kind kind);

struct KeyValue {
  std::string key;    // bytes, any value
  std::string value;  // bytes, any value
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;  // 0: no lease
};

struct Range {
  std::int64_t revision = 0;  // the store's revision the answer was read at
  std::vector<KeyValue> kvs;
};

struct Written {
  std::int64_t revision = 0;  // the store's revision after the write
  std::int64_t deleted = 0;   // del: how many keys it removed
};

// One comparison of a transaction: key's target <op> the operand.
struct Compare {
  enum class Target { create_revision, mod_revision, version, value, lease };
  enum class Op { equal, not_equal, greater, less };
  std::string key;
  Target target = Target::create_revision;
  Op op = Op::equal;
  std::int64_t number = 0;  // the operand of the revision, version and lease targets
  std::string value;        // the operand of Target::value

  static Compare absent(std::string key);   // create_revision == 0: the key does not exist
  static Compare present(std::string key);  // create_revision > 0: the key exists
  static Compare mod_revision_is(std::string key, std::int64_t revision);
  static Compare value_is(std::string key, std::string value);
  // The key is attached to `lease` (etcd 3.3+ LEASE target). A missing key has lease 0, so
  // with a non-zero lease this also says the key exists: "still held on my lease".
  static Compare lease_is(std::string key, std::int64_t lease);
};

struct TxnOp {
  enum class Kind { put, del, get, get_prefix, del_prefix, get_range };
  Kind kind = Kind::put;
  std::string key;
  std::string value;       // put; get_range: the end of the range (excluded)
  std::int64_t lease = 0;  // put: 0 for none

  static TxnOp put(std::string key, std::string value, std::int64_t lease = 0);
  static TxnOp del(std::string key);
  static TxnOp get(std::string key);
  // Every key starting with `prefix`, sorted by key: several of them in one read-only
  // transaction are one consistent view of the store at one revision, in one call.
  static TxnOp get_prefix(std::string prefix);
  // Deletes every key starting with `prefix` (one delete-range op, however many keys).
  static TxnOp del_prefix(std::string prefix);
  // Every key from `from` (included) to `to` (excluded), sorted by key.
  static TxnOp get_range(std::string from, std::string to);
};

struct TxnResult {
  bool succeeded = false;     // every compare held: the success ops ran, else the failure ops
  std::int64_t revision = 0;  // the store's revision after the transaction
  std::vector<Range> reads;   // one per get op that ran, in order
};

struct Lease {
  std::int64_t id = 0;
  std::int64_t ttl = 0;  // seconds: granted, or left after a keepalive (0: it had expired)
};

struct LeaseStatus {
  std::int64_t id = 0;
  std::int64_t ttl = -1;  // seconds left; -1: expired or never existed
  std::int64_t granted_ttl = 0;
};

class EtcdClient {
 public:
  // Checks the settings (at least one endpoint; username only with https or the lab flag; the
  // password variable set) and authenticates when a username is given. Nothing else is sent.
  static Expected<EtcdClient, EtcdFailure> open(EtcdSettings settings);

  Expected<Range, EtcdFailure> get(const std::string& key);
  Expected<Range, EtcdFailure> get_prefix(const std::string& prefix);  // sorted by key
  Expected<Written, EtcdFailure> put(const std::string& key, const std::string& value,
                                     std::int64_t lease = 0);
  Expected<Written, EtcdFailure> del(const std::string& key);
  // Deletes every key that starts with `prefix` (which must not be empty: that would be every
  // key of the store).
  Expected<Written, EtcdFailure> del_prefix(const std::string& prefix);
  Expected<TxnResult, EtcdFailure> txn(const std::vector<Compare>& compare,
                                       const std::vector<TxnOp>& success,
                                       const std::vector<TxnOp>& failure = {});

  Expected<Lease, EtcdFailure> grant(std::int64_t ttl_seconds);
  Expected<Lease, EtcdFailure> keepalive(std::int64_t lease);  // one renewal
  Expected<Written, EtcdFailure> revoke(std::int64_t lease);
  Expected<LeaseStatus, EtcdFailure> time_to_live(std::int64_t lease);

  // The endpoint that answered the last call (where the next call starts).
  const std::string& current_endpoint() const { return settings_.endpoints[current_]; }

 private:
  explicit EtcdClient(EtcdSettings settings)
      : settings_(std::move(settings)),
        connections_(std::make_shared<prom::HttpConnectionPool>()) {}
  struct Answer;
  // POSTs `body` to `path`, failing over to the next endpoint on unreachable or timeout;
  // with `reauthenticate`, an "invalid auth token" answer authenticates again and retries once.
  Expected<Answer, EtcdFailure> call(const std::string& path, const std::string& body,
                                     bool reauthenticate = true);
  Expected<Ok, EtcdFailure> authenticate();

  EtcdSettings settings_;
  std::size_t current_ = 0;
  std::string token_;  // etcd's auth token, when authenticated
  // One kept-alive connection per member, for every call of this client (and its copies): a
  // claim's five calls and a run's renewals do not each set up TCP (and TLS).
  std::shared_ptr<prom::HttpConnectionPool> connections_;
};

// The calls made to etcd (each attempt on an endpoint counts; failed ones also as failed) and
// the time spent waiting for their answers: by every EtcdClient of this process, and by those
// on the calling thread alone. A run reads both at its start and its end for its manifest
// (what coordination cost it; the lease renewals run on a thread of their own, beside it).
struct CallTally {
  std::uint64_t calls = 0;
  std::uint64_t failed = 0;
  std::chrono::microseconds waited{0};
  CallTally operator-(const CallTally& earlier) const {
    return {calls - earlier.calls, failed - earlier.failed, waited - earlier.waited};
  }
};
CallTally calls_in_process();
CallTally calls_on_this_thread();

// Standard base64 (RFC 4648, padded), as etcd's gateway writes bytes fields.
std::string base64_encode(std::string_view bytes);
// Empty when `text` is not padded standard base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace fabgate::etcd
