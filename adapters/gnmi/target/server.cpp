#include "adapters/gnmi/target/server.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <shared_mutex>
#include <sstream>
#include <thread>

#include "adapters/gnmi/data_tree.h"
#include "adapters/gnmi/proto/gnmi.grpc.pb.h"
#include "adapters/gnmi/proto_convert.h"
#include "adapters/gnmi/target/openconfig_tree.h"
#include "adapters/gnmi/target/set_transaction.h"

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

class GnmiService final : public ::gnmi::gNMI::Service {
 public:
  GnmiService(const TargetOptions& options, Node& node) : options_(options), node_(node) {}

  // Ends every STREAM subscription (they would otherwise hold a graceful shutdown to its
  // deadline): called before the server shuts down.
  void stop_streams() { stopping_ = true; }

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
    ::gnmi::SubscribeRequest request;
    if (!stream->Read(&request)) return Status::OK;
    if (!request.has_subscribe()) {
      return {StatusCode::INVALID_ARGUMENT,
              "the first SubscribeRequest must be a subscription list"};
    }
    const ::gnmi::SubscriptionList list = request.subscribe();  // a copy: `request` is reused
    if (Status bad = check_encoding(list.encoding()); !bad.ok()) return bad;
    if (list.mode() == ::gnmi::SubscriptionList::STREAM)
      return stream_samples(context, list, *stream);
    if (Status sent = send_snapshot(list, *stream); !sent.ok()) return sent;
    if (list.mode() == ::gnmi::SubscriptionList::ONCE) return Status::OK;
    while (stream->Read(&request)) {
      if (!request.has_poll()) {
        return {StatusCode::INVALID_ARGUMENT, "a POLL subscription accepts only Poll messages"};
      }
      if (Status sent = send_snapshot(list, *stream); !sent.ok()) return sent;
    }
    return Status::OK;
  }

 private:
  // Authentication, then the test-only delay.
  Status admit(ServerContext* context) const {
    if (options_.expected_login) {
      const auto& metadata = context->client_metadata();
      auto value = [&](const char* key) -> std::string {
        auto found = metadata.find(key);
        return found == metadata.end() ? std::string()
                                       : std::string(found->second.data(), found->second.size());
      };
      if (value("username") != options_.expected_login->username ||
          value("password") != options_.expected_login->password) {
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
    GnmiPath path = without_module_prefixes(requested);
    auto tree = build_tree(node_, path);
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
  // refused) at the shortest sample_interval asked for (0: 1 s; never under 100 ms). Each
  // sample is a fresh read of the node stamped with the time it was taken; sync_response
  // follows the first. A path with nothing there at a sample (the BGP neighbours while FRR
  // does not answer) is sent as a delete of that path instead of ending the stream, so the
  // client sees it go and come back. Runs until the client cancels or the server shuts down.
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
    bool first = true;
    auto next = std::chrono::steady_clock::now();
    while (!context->IsCancelled() && !stopping_) {
      if (Status sent = send_snapshot(list, stream, first, Absent::sent_as_delete); !sent.ok())
        return sent;
      first = false;
      next += interval;
      while (!context->IsCancelled() && !stopping_ && std::chrono::steady_clock::now() < next) {
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(
            next - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
      }
    }
    return {StatusCode::UNAVAILABLE, "fabgate-gnmid is stopping"};
  }

  // What a sample does with a subscribed path that is not there: ONCE and POLL refuse the
  // request; a STREAM sample says so with a delete and goes on.
  enum class Absent { refused, sent_as_delete };

  Status send_snapshot(
      const ::gnmi::SubscriptionList& list,
      grpc::ServerReaderWriter<::gnmi::SubscribeResponse, ::gnmi::SubscribeRequest>& stream,
      bool with_sync = true, Absent absent = Absent::refused) {
    GnmiPath prefix = from_proto(list.prefix());
    std::vector<::gnmi::SubscribeResponse> responses;
    {
      std::shared_lock lock(node_mutex_);
      for (const auto& subscription : list.subscription()) {
        ::gnmi::SubscribeResponse response;
        GnmiPath path = join_paths(prefix, from_proto(subscription.path()));
        Status status =
            resolve(path, list.encoding() == ::gnmi::JSON_IETF, *response.mutable_update());
        if (status.error_code() == StatusCode::NOT_FOUND && absent == Absent::sent_as_delete) {
          response.mutable_update()->Clear();
          response.mutable_update()->set_timestamp(now_ns());
          *response.mutable_update()->add_delete_() = to_proto(path);
        } else if (!status.ok()) {
          return status;
        }
        responses.push_back(std::move(response));
      }
    }
    for (const auto& response : responses) {
      if (!stream.Write(response)) return {StatusCode::CANCELLED, "client went away"};
    }
    if (!with_sync) return Status::OK;
    ::gnmi::SubscribeResponse sync;
    sync.set_sync_response(true);
    if (!stream.Write(sync)) return {StatusCode::CANCELLED, "client went away"};
    return Status::OK;
  }

  const TargetOptions& options_;
  Node& node_;
  std::shared_mutex node_mutex_;
  std::atomic<bool> stopping_{false};  // Set is exclusive, so no Get sees half a transaction
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

  LinuxNode node(options.node);
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
