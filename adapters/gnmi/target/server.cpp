#include "adapters/gnmi/target/server.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <thread>

#include "adapters/gnmi/data_tree.h"
#include "adapters/gnmi/proto/gnmi.grpc.pb.h"
#include "adapters/gnmi/proto_convert.h"
#include "adapters/gnmi/target/login_check.h"
#include "adapters/gnmi/target/openconfig_tree.h"
#include "adapters/gnmi/target/process.h"
#include "adapters/gnmi/target/set_transaction.h"
#include "adapters/gnmi/target/synthetic_routes.h"

namespace fabgate::gnmi::target {

namespace {

using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

GnmiPath without_module_prefixes(GnmiPath path) {
  for (auto& element : path.elements) element.name = strip_module_prefix(element.name);
  return path;
}

Status from_node_failure(const NodeFailure& failure) {
  switch (failure.kind) {
    case NodeFailure::Kind::not_found:
      return {StatusCode::NOT_FOUND, failure.message};
    case NodeFailure::Kind::rejected:
      return {StatusCode::INVALID_ARGUMENT, failure.message};
    case NodeFailure::Kind::unavailable:
      return {StatusCode::INTERNAL, failure.message};
  }
  return {StatusCode::INTERNAL, failure.message};
}

Status from_set_failure(const SetFailure& failure) {
  switch (failure.kind) {
    case SetFailure::Kind::invalid:
    case SetFailure::Kind::rejected:
      return {StatusCode::INVALID_ARGUMENT, failure.message};
    case SetFailure::Kind::not_found:
      return {StatusCode::NOT_FOUND, failure.message};
    case SetFailure::Kind::unimplemented:
      return {StatusCode::UNIMPLEMENTED, failure.message};
    case SetFailure::Kind::undo_failed:
      return {StatusCode::INTERNAL, failure.message};
  }
  return {StatusCode::INTERNAL, failure.message};
}

// Reads the node's BGP neighbours for the STREAM subscriptions, in a thread of its own, so
// that a slow vtysh (FRR busy converging answers after seconds) never holds back the samples
// of the other paths: a stream keeps sending interface state every interval and sends BGP
// state when, and only when, a fresh reading exists. Each reading keeps the time its answer
// arrived and a generation number, so a stream never sends one reading twice nor an old one
// under a new timestamp: a silence of FRR stays a silence the client can see. One reader per
// node however many streams subscribe; it reads while at least one does, at the shortest
// interval asked for (each read bounded by the node's command deadline).
class BgpReader {
 public:
  struct Reading {
    std::uint64_t generation = 0;
    std::int64_t read_ns = 0;  // when the answer arrived (the time the stream stamps it with)
    NodeResult<std::vector<BgpNeighborState>> neighbors;
  };

  explicit BgpReader(Node& node) : node_(node) {}
  ~BgpReader() {
    stop();
    if (thread_.joinable()) thread_.join();
  }
  BgpReader(const BgpReader&) = delete;
  BgpReader& operator=(const BgpReader&) = delete;

  void subscribe(std::chrono::nanoseconds interval) {
    std::lock_guard lock(mutex_);
    intervals_.insert(interval);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_all();
  }
  void unsubscribe(std::chrono::nanoseconds interval) {
    std::lock_guard lock(mutex_);
    if (auto found = intervals_.find(interval); found != intervals_.end()) intervals_.erase(found);
  }
  std::shared_ptr<const Reading> latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
  }
  // Ends the reader; a read in progress finishes within its command deadline.
  void stop() {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (intervals_.empty()) {
        wake_.wait(lock, [&] { return stopping_ || !intervals_.empty(); });
        continue;
      }
      const auto interval = *intervals_.begin();
      const auto started = std::chrono::steady_clock::now();
      lock.unlock();
      // No node lock: a Set changes interfaces only, so no reading can see half of one.
      auto neighbors = node_.bgp_neighbors();
      // A read that timed out is no reading: the streams stay silent (a gap the client can
      // see and cover with the transitions counters), never "the neighbours were deleted".
      const bool answered = neighbors || !neighbors.error().timed_out;
      auto reading = std::make_shared<Reading>(Reading{0, now_ns(), std::move(neighbors)});
      lock.lock();
      if (answered) {
        reading->generation = latest_ ? latest_->generation + 1 : 1;
        latest_ = std::move(reading);
      }
      wake_.wait_until(lock, started + interval, [&] { return stopping_; });
    }
  }

  Node& node_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::multiset<std::chrono::nanoseconds> intervals_;
  std::shared_ptr<const Reading> latest_;
  bool stopping_ = false;
  std::thread thread_;
};

// The node with its BGP neighbours replaced by one reading: the tree of a BGP path is built
// from what the reader read, everything else from the node as it is now.
class ReadingNode final : public Node {
 public:
  ReadingNode(Node& node, const BgpReader::Reading& reading) : node_(node), reading_(reading) {}
  std::string hostname() override { return node_.hostname(); }
  NodeResult<std::string> software_version() override { return node_.software_version(); }
  NodeResult<std::vector<InterfaceState>> interfaces() override { return node_.interfaces(); }
  NodeResult<InterfaceState> interface(const std::string& name) override {
    return node_.interface(name);
  }
  NodeResult<std::vector<NicInfo>> nics() override { return node_.nics(); }
  NodeResult<std::vector<BgpNeighborState>> bgp_neighbors() override { return reading_.neighbors; }
  NodeResult<std::vector<Ipv4Route>> ipv4_routes() override { return node_.ipv4_routes(); }
  NodeResult<std::vector<Ipv6Route>> ipv6_routes() override { return node_.ipv6_routes(); }
  NodeResult<std::vector<LldpInterface>> lldp_interfaces() override {
    return node_.lldp_interfaces();
  }
  NodeResult<Ok> set_mtu(const std::string& interface, int mtu) override {
    return node_.set_mtu(interface, mtu);
  }
  NodeResult<Ok> set_enabled(const std::string& interface, bool enabled) override {
    return node_.set_enabled(interface, enabled);
  }

 private:
  Node& node_;
  const BgpReader::Reading& reading_;
};

// Whether building the tree for `path` asks FRR (the BGP neighbours): the whole tree, or the
// network instances other than their AFT alone.
bool reads_bgp(const GnmiPath& path) {
  if (path.elements.empty()) return true;
  if (strip_module_prefix(path.elements.front().name) != "network-instances") return false;
  return std::none_of(path.elements.begin(), path.elements.end(), [](const PathElement& element) {
    return strip_module_prefix(element.name) == "afts";
  });
}

// Counts one Subscribe stream while it lives.
class StreamSlot {
 public:
  explicit StreamSlot(std::atomic<std::size_t>& active)
      : active_(active), count_(active.fetch_add(1) + 1) {}
  ~StreamSlot() { active_.fetch_sub(1); }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;
  std::size_t count() const { return count_; }  // streams open, this one included

 private:
  std::atomic<std::size_t>& active_;
  std::size_t count_;
};

// Ends a POLL subscription that receives nothing for `timeout`. A synchronous read cannot be
// given a deadline, so a watcher thread cancels the call (the client sees CANCELLED; the
// target logs the reason on stderr). A zero timeout watches nothing.
class IdleWatch {
 public:
  IdleWatch(ServerContext& context, Duration timeout) : context_(context), timeout_(timeout) {
    if (timeout_.count() > 0) watcher_ = std::thread([this] { watch(); });
  }
  ~IdleWatch() { stop(); }
  IdleWatch(const IdleWatch&) = delete;
  IdleWatch& operator=(const IdleWatch&) = delete;

  void touch() {
    std::lock_guard lock(mutex_);
    last_ = std::chrono::steady_clock::now();
    changed_.notify_all();
  }
  // Stops watching; true when the watch ended the call.
  bool stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
      changed_.notify_all();
    }
    if (watcher_.joinable()) watcher_.join();
    return expired_;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      auto until = last_ + timeout_;
      if (std::chrono::steady_clock::now() >= until) {
        expired_ = true;
        context_.TryCancel();
        return;
      }
      changed_.wait_until(lock, until);
    }
  }

  ServerContext& context_;
  const Duration timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  bool stopped_ = false;
  bool expired_ = false;
  std::thread watcher_;
};

class GnmiService final : public ::gnmi::gNMI::Service {
 public:
  GnmiService(const TargetOptions& options, Node& node)
      : options_(options),
        node_(node),
        bgp_reader_(node),
        login_check_(options.expected_login
                         ? std::optional<LoginCheck>(std::in_place, *options.expected_login)
                         : std::nullopt) {}

  // Ends every STREAM subscription (they would otherwise hold a graceful shutdown to its
  // deadline) and the BGP reader: called before the server shuts down.
  void stop_streams() {
    stopping_ = true;
    bgp_reader_.stop();
  }

  Status Capabilities(ServerContext* context, const ::gnmi::CapabilityRequest*,
                      ::gnmi::CapabilityResponse* response) override {
    if (Status denied = admit(context); !denied.ok()) return denied;
    auto add_model = [&](const char* name) {
      ::gnmi::ModelData* model = response->add_supported_models();
      model->set_name(name);
      model->set_organization("OpenConfig working group");
    };
    add_model("openconfig-system");
    add_model("openconfig-interfaces");
    add_model("openconfig-if-ip");
    add_model("openconfig-platform");
    if (node_.bgp_neighbors()) add_model("openconfig-network-instance");
    if (node_.lldp_interfaces()) add_model("openconfig-lldp");
    response->add_supported_encodings(::gnmi::JSON);
    response->add_supported_encodings(::gnmi::JSON_IETF);
    response->set_gnmi_version("0.10.0");
    return Status::OK;
  }

  Status Get(ServerContext* context, const ::gnmi::GetRequest* request,
             ::gnmi::GetResponse* response) override {
    if (Status denied = admit(context); !denied.ok()) return denied;
    if (Status bad = check_encoding(request->encoding()); !bad.ok()) return bad;
    auto deadline = caller_deadline(*context);
    std::shared_lock lock(node_mutex_);
    GnmiPath prefix = from_proto(request->prefix());
    DataType type = request->type() == ::gnmi::GetRequest::CONFIG        ? DataType::config
                    : request->type() == ::gnmi::GetRequest::STATE       ? DataType::state
                    : request->type() == ::gnmi::GetRequest::OPERATIONAL ? DataType::operational
                                                                         : DataType::all;
    for (const auto& requested : request->path()) {
      Status status =
          resolve(join_paths(prefix, from_proto(requested)),
                  request->encoding() == ::gnmi::JSON_IETF, *response->add_notification(), type);
      if (!status.ok()) return status;
    }
    return Status::OK;
  }

  Status Set(ServerContext* context, const ::gnmi::SetRequest* request,
             ::gnmi::SetResponse* response) override {
    if (Status denied = admit(context); !denied.ok()) return denied;
    if (request->union_replace_size() > 0) {
      return {StatusCode::UNIMPLEMENTED, "union_replace is not supported"};
    }
    GnmiPath prefix = from_proto(request->prefix());
    std::vector<SetChange> changes;
    for (const auto& deleted : request->delete_()) {
      changes.push_back({SetChange::Kind::remove,
                         without_module_prefixes(join_paths(prefix, from_proto(deleted))),
                         {}});
    }
    auto add_updates = [&](const auto& updates, SetChange::Kind kind) -> Status {
      for (const auto& update : updates) {
        GnmiPath path = without_module_prefixes(join_paths(prefix, from_proto(update.path())));
        auto text = typed_value_to_json(update.val());
        if (!text)
          return {StatusCode::INVALID_ARGUMENT, path.to_string() + ": " + text.error().reason};
        changes.push_back(
            {kind, path, strip_module_prefixes(nlohmann::json::parse(*text, nullptr, false))});
      }
      return Status::OK;
    };
    if (Status bad = add_updates(request->replace(), SetChange::Kind::replace); !bad.ok())
      return bad;
    if (Status bad = add_updates(request->update(), SetChange::Kind::update); !bad.ok()) return bad;

    std::unique_lock lock(node_mutex_);
    auto applied = apply_set(node_, changes);
    if (!applied) return from_set_failure(applied.error());
    response->set_timestamp(now_ns());
    for (const auto& change : *applied) {
      ::gnmi::UpdateResult* result = response->add_response();
      *result->mutable_path() = to_proto(change.path);
      result->set_op(change.kind == SetChange::Kind::remove    ? ::gnmi::UpdateResult::DELETE
                     : change.kind == SetChange::Kind::replace ? ::gnmi::UpdateResult::REPLACE
                                                               : ::gnmi::UpdateResult::UPDATE);
    }
    return Status::OK;
  }

  Status Subscribe(ServerContext* context,
                   grpc::ServerReaderWriter<::gnmi::SubscribeResponse, ::gnmi::SubscribeRequest>*
                       stream) override {
    if (Status denied = admit(context); !denied.ok()) return denied;
    StreamSlot slot(active_streams_);
    if (slot.count() > options_.max_streams) {
      return {StatusCode::RESOURCE_EXHAUSTED,
              "fabgate-gnmid serves at most " + std::to_string(options_.max_streams) +
                  " Subscribe streams at once (--max-streams); try again when one has ended"};
    }
    ::gnmi::SubscribeRequest request;
    if (!stream->Read(&request)) return Status::OK;
    if (!request.has_subscribe()) {
      return {StatusCode::INVALID_ARGUMENT,
              "the first SubscribeRequest must be a subscription list"};
    }
    const ::gnmi::SubscriptionList list = request.subscribe();  // a copy: `request` is reused
    if (Status bad = check_encoding(list.encoding()); !bad.ok()) return bad;
    if (const auto& mode = ::gnmi::SubscriptionList::Mode_Name(list.mode());
        options_.unimplemented_modes.count(mode))
      return {StatusCode::UNIMPLEMENTED, "Subscribe " + mode + " is not implemented here"};
    if (list.mode() == ::gnmi::SubscriptionList::STREAM)
      return stream_samples(context, list, *stream);
    if (Status sent = send_snapshot(list, *stream); !sent.ok()) return sent;
    if (list.mode() == ::gnmi::SubscriptionList::ONCE) return Status::OK;
    IdleWatch idle(*context, options_.poll_idle_timeout);
    while (stream->Read(&request)) {
      idle.touch();
      if (!request.has_poll()) {
        return {StatusCode::INVALID_ARGUMENT, "a POLL subscription accepts only Poll messages"};
      }
      if (Status sent = send_snapshot(list, *stream); !sent.ok()) return sent;
      idle.touch();  // idle from the answer on: a slow answer does not count against the client
    }
    if (idle.stop()) {
      std::string reason = "no poll request for " + format_duration(options_.poll_idle_timeout) +
                           ": POLL subscription ended (--poll-idle-timeout)";
      std::fprintf(stderr, "fabgate-gnmid: %s: %s\n", context->peer().c_str(), reason.c_str());
      return {StatusCode::DEADLINE_EXCEEDED, reason};
    }
    return Status::OK;
  }

 private:
  // Authentication, then the test-only delay.
  // The commands a Get runs are bounded by the client's deadline rather than the node's own
  // command limit (CallerDeadline); none for a call without a deadline.
  static std::optional<CallerDeadline> caller_deadline(const ServerContext& context) {
    auto deadline = context.deadline();
    if (deadline == std::chrono::system_clock::time_point::max()) return std::nullopt;
    auto left = deadline - std::chrono::system_clock::now();
    return std::optional<CallerDeadline>(
        std::in_place, std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(left));
  }

  Status admit(ServerContext* context) const {
    if (login_check_) {
      const auto& metadata = context->client_metadata();
      auto value = [&](const char* key) -> std::string_view {
        auto found = metadata.find(key);
        return found == metadata.end()
                   ? std::string_view()
                   : std::string_view(found->second.data(), found->second.size());
      };
      // Compared in constant time (login_check.h): how long the refusal takes tells a client
      // nothing about how much of a guess was right.
      if (!login_check_->admits(value("username"), value("password"))) {
        return {StatusCode::UNAUTHENTICATED, "username/password metadata missing or wrong"};
      }
    }
    if (options_.debug_delay.count() > 0) std::this_thread::sleep_for(options_.debug_delay);
    return Status::OK;
  }

  static Status check_encoding(int encoding) {
    if (encoding == ::gnmi::JSON || encoding == ::gnmi::JSON_IETF) return Status::OK;
    std::string name = ::gnmi::Encoding_Name(static_cast<::gnmi::Encoding>(encoding));
    return {StatusCode::UNIMPLEMENTED, "encoding " +
                                           (name.empty() ? std::to_string(encoding) : name) +
                                           " is not supported; use JSON or JSON_IETF"};
  }

  // One notification with an update per node `path` matches (wildcards expanded).
  // A path that exists but holds no data of `type` gives a notification without updates.
  Status resolve(const GnmiPath& requested, bool json_ietf, ::gnmi::Notification& notification,
                 DataType type = DataType::all) {
    return resolve_in(node_, requested, json_ietf, notification, type);
  }

  // resolve() against `node` (the live node, or one BGP reading of it).
  Status resolve_in(Node& node, const GnmiPath& requested, bool json_ietf,
                    ::gnmi::Notification& notification, DataType type = DataType::all) {
    GnmiPath path = without_module_prefixes(requested);
    auto tree = build_tree(node, path);
    if (!tree) return from_node_failure(tree.error());
    auto matches = find_in_tree(*tree, path);
    if (!matches) {
      return {StatusCode::NOT_FOUND,
              "path " + requested.to_string() + " not found: " + matches.error()};
    }
    notification.set_timestamp(now_ns());
    nlohmann::json selected;
    if (type != DataType::all) {
      selected = select_data_type(*tree, type);
      auto typed = find_in_tree(selected, path);
      if (!typed) return Status::OK;
      matches = std::move(typed);
    }
    for (const auto& match : *matches) {
      ::gnmi::Update* update = notification.add_update();
      *update->mutable_path() = to_proto(match.path);
      std::string value = encode_value(match, json_ietf);
      if (json_ietf)
        update->mutable_val()->set_json_ietf_val(value);
      else
        update->mutable_val()->set_json_val(value);
    }
    return Status::OK;
  }

  // STREAM: every subscription is served as SAMPLE (TARGET_DEFINED included; ON_CHANGE is
  // refused) at the shortest sample_interval asked for (0: 1 s; never under 100 ms). Paths
  // that do not ask FRR are a fresh read of the node every interval, stamped with the time it
  // was taken. Paths that ask FRR (the BGP neighbours) are sent from the BGP reader's readings
  // as each new one arrives, stamped with the time it was read: while vtysh is slow they go
  // quiet (and the client sees that silence) while the interface samples go on. sync_response
  // follows once every path was sent. A path with nothing there at a sample (the BGP
  // neighbours while FRR does not answer) is sent as a delete of that path instead of ending
  // the stream, so the client sees it go and come back. Runs until the client cancels or the
  // server shuts down.
  Status stream_samples(
      ServerContext* context, const ::gnmi::SubscriptionList& list,
      grpc::ServerReaderWriter<::gnmi::SubscribeResponse, ::gnmi::SubscribeRequest>& stream) {
    std::chrono::nanoseconds interval{0};
    for (const auto& subscription : list.subscription()) {
      if (subscription.mode() == ::gnmi::ON_CHANGE) {
        return {StatusCode::UNIMPLEMENTED,
                "ON_CHANGE is not supported; fabgate-gnmid streams SAMPLE subscriptions"};
      }
      std::chrono::nanoseconds asked{subscription.sample_interval()};
      if (asked.count() > 0 && (interval.count() == 0 || asked < interval)) interval = asked;
    }
    if (interval.count() == 0) interval = std::chrono::seconds(1);
    interval = std::max<std::chrono::nanoseconds>(interval, std::chrono::milliseconds(100));

    const GnmiPath prefix = from_proto(list.prefix());
    const bool json_ietf = list.encoding() == ::gnmi::JSON_IETF;
    std::vector<GnmiPath> live, from_reading;
    for (const auto& subscription : list.subscription()) {
      GnmiPath path = join_paths(prefix, from_proto(subscription.path()));
      (reads_bgp(without_module_prefixes(path)) ? from_reading : live).push_back(path);
    }
    // Unsubscribes however the stream ends.
    struct Subscribed {
      BgpReader* reader;
      std::chrono::nanoseconds interval;
      ~Subscribed() {
        if (reader) reader->unsubscribe(interval);
      }
    } subscribed{from_reading.empty() ? nullptr : &bgp_reader_, interval};

    // Only readings taken after the subscription: one left from an earlier stream is old news
    // (sent, it would make the stream look as if it had sampled BGP back then).
    std::uint64_t sent_generation = 0;
    if (auto old = bgp_reader_.latest()) sent_generation = old->generation;
    const std::uint64_t subscribed_at_generation = sent_generation;
    if (!from_reading.empty()) bgp_reader_.subscribe(interval);
    bool synced = false;
    auto next = std::chrono::steady_clock::now();
    while (!context->IsCancelled() && !stopping_) {
      if (std::chrono::steady_clock::now() >= next) {
        if (!live.empty()) {
          if (Status sent = send_sample(live, json_ietf, node_, std::nullopt, stream); !sent.ok())
            return sent;
        }
        // A process that was stopped (SIGSTOP, a starved CPU) resumes with one sample, not a
        // burst of the ones it missed: those moments were not read, and a sample now says so.
        next += interval;
        if (const auto now = std::chrono::steady_clock::now(); next <= now) next = now + interval;
      }
      if (!from_reading.empty()) {
        auto reading = bgp_reader_.latest();
        if (reading && reading->generation > sent_generation) {
          ReadingNode read_node(node_, *reading);
          if (Status sent =
                  send_sample(from_reading, json_ietf, read_node, reading->read_ns, stream);
              !sent.ok())
            return sent;
          sent_generation = reading->generation;
        }
      }
      if (!synced && (from_reading.empty() || sent_generation > subscribed_at_generation)) {
        ::gnmi::SubscribeResponse sync;
        sync.set_sync_response(true);
        if (!stream.Write(sync)) return {StatusCode::CANCELLED, "client went away"};
        synced = true;
      }
      // Short naps: the next interface sample is due at `next`, a new BGP reading any time.
      std::this_thread::sleep_for(std::clamp<std::chrono::nanoseconds>(
          next - std::chrono::steady_clock::now(), std::chrono::milliseconds(1),
          std::chrono::milliseconds(from_reading.empty() ? 50 : 20)));
    }
    return {StatusCode::UNAVAILABLE, "fabgate-gnmid is stopping"};
  }

  // One STREAM sample of `paths` from `node`, each notification stamped `stamped_ns` (the
  // BGP reading's time) or, without it, the time it was built. A path with nothing there is
  // sent as a delete.
  Status send_sample(
      const std::vector<GnmiPath>& paths, bool json_ietf, Node& node,
      std::optional<std::int64_t> stamped_ns,
      grpc::ServerReaderWriter<::gnmi::SubscribeResponse, ::gnmi::SubscribeRequest>& stream) {
    std::vector<::gnmi::SubscribeResponse> responses;
    {
      std::shared_lock lock(node_mutex_);
      for (const auto& path : paths) {
        ::gnmi::SubscribeResponse response;
        Status status = resolve_in(node, path, json_ietf, *response.mutable_update());
        if (status.error_code() == StatusCode::NOT_FOUND) {
          response.mutable_update()->Clear();
          response.mutable_update()->set_timestamp(now_ns());
          *response.mutable_update()->add_delete_() = to_proto(path);
        } else if (!status.ok()) {
          return status;
        }
        if (stamped_ns) response.mutable_update()->set_timestamp(*stamped_ns);
        responses.push_back(std::move(response));
      }
    }
    for (const auto& response : responses) {
      if (!stream.Write(response)) return {StatusCode::CANCELLED, "client went away"};
    }
    return Status::OK;
  }

  // ONCE and POLL: every subscribed path now, then sync_response; a path that is not there
  // refuses the request.
  Status send_snapshot(
      const ::gnmi::SubscriptionList& list,
      grpc::ServerReaderWriter<::gnmi::SubscribeResponse, ::gnmi::SubscribeRequest>& stream) {
    GnmiPath prefix = from_proto(list.prefix());
    std::vector<::gnmi::SubscribeResponse> responses;
    {
      std::shared_lock lock(node_mutex_);
      for (const auto& subscription : list.subscription()) {
        ::gnmi::SubscribeResponse response;
        GnmiPath path = join_paths(prefix, from_proto(subscription.path()));
        Status status =
            resolve(path, list.encoding() == ::gnmi::JSON_IETF, *response.mutable_update());
        if (!status.ok()) return status;
        responses.push_back(std::move(response));
      }
    }
    for (const auto& response : responses) {
      if (!stream.Write(response)) return {StatusCode::CANCELLED, "client went away"};
    }
    ::gnmi::SubscribeResponse sync;
    sync.set_sync_response(true);
    if (!stream.Write(sync)) return {StatusCode::CANCELLED, "client went away"};
    return Status::OK;
  }

  const TargetOptions& options_;
  Node& node_;
  std::shared_mutex node_mutex_;
  std::atomic<bool> stopping_{false};  // Set is exclusive, so no Get sees half a transaction
  std::atomic<std::size_t> active_streams_{0};
  BgpReader bgp_reader_;
  std::optional<LoginCheck> login_check_;  // set: --credentials-env
};

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "fabgate-gnmid: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int run_target(const TargetOptions& options) {
  // Signals are taken by one thread with sigwait. They must be blocked before anything touches
  // gRPC: creating credentials already initializes it and starts its threads, which inherit the
  // mask of the thread that created them; one left unblocked gets SIGTERM's default action.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (options.listen.empty()) return fail("--listen ADDR:PORT (or unix:PATH) is required");
  bool has_tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (has_tls == options.insecure_plaintext) {
    return fail("give either --tls-cert and --tls-key, or --insecure-plaintext (exactly one)");
  }
  if (!options.tls_client_ca_file.empty() && options.insecure_plaintext) {
    return fail(
        "--tls-client-ca needs TLS (--tls-cert, --tls-key): over --insecure-plaintext no client "
        "presents a certificate, so it would authenticate nobody");
  }
  if (options.expected_login &&
      (options.expected_login->username.empty() || options.expected_login->password.empty())) {
    return fail(
        "--credentials-env: an empty username or password would admit calls that send none");
  }
  bool authenticates = options.expected_login || !options.tls_client_ca_file.empty();
  if (!authenticates && !options.no_auth) {
    return fail(
        "every client that reaches " + options.listen +
        " could read and Set this node: give --credentials-env PREFIX (with TLS) or "
        "--tls-client-ca FILE, or --no-auth to serve without authentication (lab and tests only)");
  }
  if (authenticates && options.no_auth) {
    return fail(
        "--no-auth contradicts --credentials-env and --tls-client-ca: give one or the other");
  }
  if (options.expected_login && options.insecure_plaintext &&
      !options.lab_insecure_plaintext_credentials) {
    return fail(
        "--credentials-env with --insecure-plaintext takes the username and password in clear "
        "text: serve TLS (--tls-cert, --tls-key), or give --lab-insecure-plaintext-credentials "
        "(lab only)");
  }
  if (options.lab_insecure_plaintext_credentials &&
      !(options.expected_login && options.insecure_plaintext)) {
    return fail(
        "--lab-insecure-plaintext-credentials applies only to --credentials-env with "
        "--insecure-plaintext");
  }
  if (options.max_streams == 0) return fail("--max-streams must be at least 1");
  if (options.no_auth) {
    std::fprintf(stderr,
                 "fabgate-gnmid: WARNING: --no-auth: every client that reaches %s can read and "
                 "Set this node without authentication (lab and tests only)\n",
                 options.listen.c_str());
  }
  if (options.lab_insecure_plaintext_credentials) {
    std::fprintf(stderr,
                 "fabgate-gnmid: WARNING: --lab-insecure-plaintext-credentials: clients send "
                 "their username and password to %s in clear text (lab only)\n",
                 options.listen.c_str());
  }
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (options.insecure_plaintext) {
    credentials = grpc::InsecureServerCredentials();
  } else {
    auto cert = read_file(options.tls_cert_file);
    auto key = read_file(options.tls_key_file);
    if (!cert || !key) {
      return fail("cannot read TLS certificate '" + options.tls_cert_file + "' or key '" +
                  options.tls_key_file + "'");
    }
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    if (!options.tls_client_ca_file.empty()) {
      auto ca = read_file(options.tls_client_ca_file);
      if (!ca) return fail("cannot read client CA '" + options.tls_client_ca_file + "'");
      ssl.pem_root_certs = *ca;
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    credentials = grpc::SslServerCredentials(ssl);
  }

  LinuxNode linux_node(options.node);
  SyntheticRoutesNode synthetic_node(linux_node, options.debug_synthetic_ipv4_routes);
  Node& node = options.debug_synthetic_ipv4_routes > 0 ? static_cast<Node&>(synthetic_node)
                                                       : static_cast<Node&>(linux_node);
  GnmiService service(options, node);
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(options.listen, credentials, &bound_port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) return fail("cannot listen on " + options.listen);

  bool unix_socket = options.listen.rfind("unix:", 0) == 0;
  if (unix_socket)
    std::printf("%s\n", options.listen.substr(5).c_str());
  else
    std::printf("%d\n", bound_port);
  std::fflush(stdout);

  std::thread stopper([&] {
    int received = 0;
    sigwait(&stop_signals, &received);
    service.stop_streams();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  server->Wait();
  stopper.join();
  return 0;
}

}  // namespace fabgate::gnmi::target
