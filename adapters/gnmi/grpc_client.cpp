// The real GnmiClient: gRPC with the generated gnmi stubs. Everything gRPC stays in this file.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "adapters/core/thread_entry.h"
#include "adapters/gnmi/client.h"
#include "adapters/gnmi/proto/gnmi.grpc.pb.h"
#include "adapters/gnmi/proto_convert.h"

namespace fabgate::gnmi {

namespace {

using Clock = std::chrono::system_clock;

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// gRPC reports a failed TLS handshake as UNAVAILABLE; its message is the only way to tell it
// from a host that is down, and the difference matters to the operator.
bool looks_like_tls_failure(const std::string& message) {
  std::string text = lowercase(message);
  for (const char* marker : {"ssl", "tls", "handshake", "certificate"}) {
    if (text.find(marker) != std::string::npos) return true;
  }
  return false;
}

GnmiFailure::Kind kind_from_status(const grpc::Status& status) {
  using K = GnmiFailure::Kind;
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return looks_like_tls_failure(status.error_message()) ? K::tls : K::unreachable;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return K::timeout;
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::UNIMPLEMENTED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::ALREADY_EXISTS:
      return K::rejected;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return K::auth;
    default:
      return K::internal;
  }
}

// "12.5 MiB", "256 MiB", "900 KiB": sizes in failure messages, as an operator would write them.
std::string format_size(std::int64_t bytes) {
  char text[32];
  if (bytes >= (std::int64_t{1} << 20)) {
    double mib = static_cast<double>(bytes) / static_cast<double>(1 << 20);
    std::snprintf(text, sizeof text,
                  mib == static_cast<double>(bytes >> 20) ? "%.0f MiB" : "%.1f MiB", mib);
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof text, "%lld KiB", static_cast<long long>(bytes / 1024));
  } else {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  }
  return text;
}

// gRPC refuses a message over the channel's receive limit with RESOURCE_EXHAUSTED and
// "Received message larger than max (SIZE vs. LIMIT)"; the size, when the text has it.
std::optional<std::int64_t> oversized_reply_bytes(const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return std::nullopt;
  const std::string& message = status.error_message();
  const std::string marker = "larger than max (";
  auto at = message.find(marker);
  if (at == std::string::npos) return std::nullopt;
  std::int64_t bytes = 0;
  bool digits = false;
  for (std::size_t i = at + marker.size();
       i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])); ++i) {
    digits = true;
    if (bytes > (std::int64_t{1} << 50)) break;
    bytes = bytes * 10 + (message[i] - '0');
  }
  return digits ? bytes : 0;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

::gnmi::Encoding to_proto(Encoding encoding) {
  return encoding == Encoding::json_ietf ? ::gnmi::JSON_IETF : ::gnmi::JSON;
}

::gnmi::GetRequest::DataType to_proto(DataType type) {
  switch (type) {
    case DataType::all:
      return ::gnmi::GetRequest::ALL;
    case DataType::config:
      return ::gnmi::GetRequest::CONFIG;
    case DataType::state:
      return ::gnmi::GetRequest::STATE;
    case DataType::operational:
      return ::gnmi::GetRequest::OPERATIONAL;
  }
  return ::gnmi::GetRequest::ALL;
}

class GrpcGnmiClient;

class GrpcStream final : public GnmiStream {
 public:
  GrpcStream(
      const GrpcGnmiClient& client, std::unique_ptr<grpc::ClientContext> context,
      std::unique_ptr<grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>>
          stream,
      std::string operation, Duration deadline)
      : client_(client),
        context_(std::move(context)),
        stream_(std::move(stream)),
        operation_(std::move(operation)),
        deadline_(deadline) {}
  ~GrpcStream() override {
    context_->TryCancel();
    if (!finished_) (void)stream_->Finish();
  }

  GnmiResult<Ok> run(const std::function<void(const GnmiNotification&)>& on_notification) override;
  void stop() override {
    stopped_ = true;
    context_->TryCancel();
  }

 private:
  const GrpcGnmiClient& client_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>>
      stream_;
  std::string operation_;
  Duration deadline_;
  std::atomic<bool> stopped_{false};
  bool finished_ = false;
};

class GrpcPollSession final : public GnmiPollSession {
 public:
  GrpcPollSession(
      const GrpcGnmiClient& client, std::unique_ptr<grpc::ClientContext> context,
      std::unique_ptr<grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>>
          stream,
      Duration deadline)
      : client_(client),
        context_(std::move(context)),
        stream_(std::move(stream)),
        deadline_(deadline) {}
  ~GrpcPollSession() override;

  GnmiResult<std::vector<GnmiNotification>> next(std::optional<Duration> round_deadline) override;

 private:
  GnmiResult<std::vector<GnmiNotification>> round();
  // A blocking Read has no deadline of its own: this thread cancels the call when a round
  // passes its deadline.
  void watch();

  const GrpcGnmiClient& client_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>>
      stream_;
  Duration deadline_;
  bool first_ = true;
  bool finished_ = false;
  std::mutex watch_mutex_;
  std::condition_variable watch_wake_;
  std::optional<std::chrono::steady_clock::time_point> round_ends_;
  bool closing_ = false, round_timed_out_ = false;
  std::thread watchdog_;
};

class GrpcGnmiClient final : public GnmiClient {
 public:
  GrpcGnmiClient(GnmiClientOptions options, std::shared_ptr<grpc::Channel> channel)
      : options_(std::move(options)), stub_(::gnmi::gNMI::NewStub(channel)) {}

  GnmiResult<Capabilities> capabilities(Duration deadline) override {
    auto context = make_context(deadline);
    ::gnmi::CapabilityResponse response;
    grpc::Status status = stub_->Capabilities(context.get(), {}, &response);
    if (!status.ok()) return failure(status, "Capabilities", deadline);
    Capabilities out;
    out.gnmi_version = response.gnmi_version();
    for (const auto& model : response.supported_models()) {
      out.models.push_back({model.name(), model.organization(), model.version()});
    }
    for (int encoding : response.supported_encodings()) {
      std::string name = ::gnmi::Encoding_Name(static_cast<::gnmi::Encoding>(encoding));
      out.encodings.push_back(name.empty() ? std::to_string(encoding) : name);
    }
    return out;
  }

  using GnmiClient::get;
  GnmiResult<std::vector<GnmiNotification>> get(const std::vector<std::string>& paths,
                                                Encoding encoding, DataType type,
                                                Duration deadline) override {
    std::string operation = "Get " + join_paths_text(paths);
    if (type != DataType::all) operation += " (type " + std::string(to_string(type)) + ")";
    ::gnmi::GetRequest request;
    request.set_encoding(to_proto(encoding));
    request.set_type(to_proto(type));
    for (const auto& text : paths) {
      auto path = parse_for(text, operation);
      if (!path) return path.error();
      *request.add_path() = to_proto(*path);
    }
    auto context = make_context(deadline);
    ::gnmi::GetResponse response;
    grpc::Status status = stub_->Get(context.get(), request, &response);
    if (!status.ok()) return failure(status, operation, deadline);
    std::vector<GnmiNotification> out;
    out.reserve(static_cast<std::size_t>(response.notification_size()));
    for (auto& notification : *response.mutable_notification()) {
      auto converted = take(notification, operation);
      if (!converted) return converted.error();
      out.push_back(std::move(converted.value()));
    }
    return out;
  }

  GnmiResult<SetResult> set(const std::vector<SetOperation>& operations,
                            Duration deadline) override {
    std::vector<std::string> described;
    for (const auto& op : operations)
      described.push_back(std::string(to_string(op.kind)) + " " + op.path);
    std::string operation = "Set " + join_paths_text(described);
    ::gnmi::SetRequest request;
    for (const auto& op : operations) {
      auto path = parse_for(op.path, operation);
      if (!path) return path.error();
      if (op.kind == SetOperation::Kind::remove) {
        *request.add_delete_() = to_proto(*path);
        continue;
      }
      if (nlohmann::json::parse(op.value, nullptr, false).is_discarded()) {
        return GnmiFailure{GnmiFailure::Kind::rejected, prefix(operation) + "value for " + op.path +
                                                            " is not JSON: " + op.value};
      }
      ::gnmi::Update* update =
          op.kind == SetOperation::Kind::replace ? request.add_replace() : request.add_update();
      *update->mutable_path() = to_proto(*path);
      update->mutable_val()->set_json_ietf_val(op.value);
    }
    auto context = make_context(deadline);
    ::gnmi::SetResponse response;
    grpc::Status status = stub_->Set(context.get(), request, &response);
    if (!status.ok()) return failure(status, operation, deadline);
    SetResult out;
    out.timestamp_ns = response.timestamp();
    GnmiPath response_prefix = from_proto(response.prefix());
    for (const auto& result : response.response()) {
      std::string op = lowercase(::gnmi::UpdateResult::Operation_Name(result.op()));
      out.applied.push_back(op + " " +
                            join_paths(response_prefix, from_proto(result.path())).to_string());
    }
    return out;
  }

  GnmiResult<std::vector<GnmiNotification>> subscribe_once(const std::vector<std::string>& paths,
                                                           Encoding encoding,
                                                           Duration deadline) override {
    std::string operation = "Subscribe ONCE " + join_paths_text(paths);
    auto request = subscription(paths, encoding, ::gnmi::SubscriptionList::ONCE, operation);
    if (!request) return request.error();
    auto context = make_context(deadline);
    auto stream = stub_->Subscribe(context.get());
    stream->Write(*request);
    stream->WritesDone();
    std::vector<GnmiNotification> out;
    bool synced = false;
    ::gnmi::SubscribeResponse response;
    while (stream->Read(&response)) {
      if (response.has_update()) {
        auto converted = convert(response.update(), operation);
        if (!converted) {
          context->TryCancel();
          (void)stream->Finish();
          return converted.error();
        }
        out.push_back(std::move(converted.value()));
      } else if (response.sync_response()) {
        synced = true;
      }
    }
    grpc::Status status = stream->Finish();
    if (!status.ok()) return failure(status, operation, deadline);
    if (!synced) {
      return GnmiFailure{GnmiFailure::Kind::internal,
                         prefix(operation) + "the target closed the stream without sync_response"};
    }
    return out;
  }

  GnmiResult<std::unique_ptr<GnmiPollSession>> subscribe_poll(const std::vector<std::string>& paths,
                                                              Encoding encoding,
                                                              Duration session_deadline) override {
    std::string operation = "Subscribe POLL " + join_paths_text(paths);
    auto request = subscription(paths, encoding, ::gnmi::SubscriptionList::POLL, operation);
    if (!request) return request.error();
    auto context = make_context(session_deadline);
    auto stream = stub_->Subscribe(context.get());
    if (!stream->Write(*request)) {
      grpc::Status status = stream->Finish();
      return failure(status, operation, session_deadline);
    }
    return std::unique_ptr<GnmiPollSession>(std::make_unique<GrpcPollSession>(
        *this, std::move(context), std::move(stream), session_deadline));
  }

  GnmiResult<std::unique_ptr<GnmiStream>> subscribe_stream(const std::vector<std::string>& paths,
                                                           Encoding encoding,
                                                           Duration sample_interval,
                                                           Duration session_deadline) override {
    std::string operation = "Subscribe STREAM " + join_paths_text(paths);
    auto request = subscription(paths, encoding, ::gnmi::SubscriptionList::STREAM, operation);
    if (!request) return request.error();
    const auto interval_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(sample_interval).count());
    for (auto& entry : *request->mutable_subscribe()->mutable_subscription()) {
      entry.set_mode(::gnmi::SAMPLE);
      entry.set_sample_interval(interval_ns);
    }
    auto context = make_context(session_deadline);
    auto stream = stub_->Subscribe(context.get());
    if (!stream->Write(*request)) {
      grpc::Status status = stream->Finish();
      return failure(status, operation, session_deadline);
    }
    return std::unique_ptr<GnmiStream>(std::make_unique<GrpcStream>(
        *this, std::move(context), std::move(stream), operation, session_deadline));
  }

  // Shared with the poll session.
  std::string prefix(std::string_view operation) const {
    return "gnmi: " +
           (options_.device.empty() ? options_.address
                                    : options_.device + " (" + options_.address + ")") +
           ": " + std::string(operation) + ": ";
  }

  GnmiFailure failure(const grpc::Status& status, std::string_view operation,
                      Duration deadline) const {
    if (auto bytes = oversized_reply_bytes(status)) {
      // The reply arrived and was dropped unread: a limit of ours, not a refusal of the target.
      std::string size = *bytes > 0 ? " (" + format_size(*bytes) + ")" : "";
      return GnmiFailure{GnmiFailure::Kind::internal,
                         prefix(operation) + "the reply" + size +
                             " is larger than the receive limit of " +
                             format_size(options_.max_receive_message_size) +
                             "; raise gnmi.max_receive_message_size for " +
                             (options_.device.empty() ? "this device" : options_.device) +
                             " in the inventory (docs/gnmi.md) (gRPC status " +
                             std::to_string(static_cast<int>(status.error_code())) + ")"};
    }
    GnmiFailure::Kind kind = kind_from_status(status);
    std::string cause = kind == GnmiFailure::Kind::timeout
                            ? "timed out after " + format_duration(deadline)
                            : status.error_message();
    return GnmiFailure{kind,
                       prefix(operation) + cause + " (gRPC status " +
                           std::to_string(static_cast<int>(status.error_code())) + ")",
                       status.error_code() == grpc::StatusCode::UNIMPLEMENTED};
  }

  // convert() for a reply that is ours to take apart (a GetResponse): each JSON value is moved
  // out of the message, so a whole route table is held once as text, not three times.
  GnmiResult<GnmiNotification> take(::gnmi::Notification& notification,
                                    std::string_view operation) const {
    GnmiNotification out;
    out.timestamp_ns = notification.timestamp();
    GnmiPath notification_prefix = from_proto(notification.prefix());
    out.updates.reserve(static_cast<std::size_t>(notification.update_size()));
    for (auto& update : *notification.mutable_update()) {
      GnmiPath path = join_paths(notification_prefix, from_proto(update.path()));
      auto json = take_typed_value_json(*update.mutable_val());
      if (!json) {
        return GnmiFailure{GnmiFailure::Kind::internal, prefix(operation) + "unreadable value at " +
                                                            path.to_string() + ": " +
                                                            json.error().reason};
      }
      out.updates.push_back({std::move(path), std::move(json.value())});
    }
    for (const auto& deleted : notification.delete_()) {
      out.deletes.push_back(join_paths(notification_prefix, from_proto(deleted)));
    }
    return out;
  }

  GnmiResult<GnmiNotification> convert(const ::gnmi::Notification& notification,
                                       std::string_view operation) const {
    GnmiNotification out;
    out.timestamp_ns = notification.timestamp();
    GnmiPath notification_prefix = from_proto(notification.prefix());
    for (const auto& update : notification.update()) {
      GnmiPath path = join_paths(notification_prefix, from_proto(update.path()));
      auto json = typed_value_to_json(update.val());
      if (!json) {
        return GnmiFailure{GnmiFailure::Kind::internal, prefix(operation) + "unreadable value at " +
                                                            path.to_string() + ": " +
                                                            json.error().reason};
      }
      out.updates.push_back({std::move(path), std::move(json.value())});
    }
    for (const auto& deleted : notification.delete_()) {
      out.deletes.push_back(join_paths(notification_prefix, from_proto(deleted)));
    }
    return out;
  }

 private:
  std::unique_ptr<grpc::ClientContext> make_context(Duration deadline) const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(Clock::now() + deadline);
    if (options_.login) {
      context->AddMetadata("username", options_.login->username);
      context->AddMetadata("password", options_.login->password);
    }
    return context;
  }

  GnmiResult<GnmiPath> parse_for(const std::string& text, std::string_view operation) const {
    auto path = parse_path(text);
    if (!path) {
      return GnmiFailure{GnmiFailure::Kind::rejected,
                         prefix(operation) + path.error().describe(text)};
    }
    return std::move(path.value());
  }

  GnmiResult<::gnmi::SubscribeRequest> subscription(const std::vector<std::string>& paths,
                                                    Encoding encoding,
                                                    ::gnmi::SubscriptionList::Mode mode,
                                                    std::string_view operation) const {
    ::gnmi::SubscribeRequest request;
    ::gnmi::SubscriptionList* list = request.mutable_subscribe();
    list->set_mode(mode);
    list->set_encoding(to_proto(encoding));
    for (const auto& text : paths) {
      auto path = parse_for(text, operation);
      if (!path) return path.error();
      *list->add_subscription()->mutable_path() = to_proto(*path);
    }
    return request;
  }

  static std::string join_paths_text(const std::vector<std::string>& paths) {
    std::string out;
    for (const auto& path : paths) out += (out.empty() ? "" : ", ") + path;
    return out;
  }

  GnmiClientOptions options_;
  std::unique_ptr<::gnmi::gNMI::Stub> stub_;
};

GrpcPollSession::~GrpcPollSession() {
  {
    std::lock_guard lock(watch_mutex_);
    closing_ = true;
    watch_wake_.notify_all();
  }
  if (watchdog_.joinable()) watchdog_.join();
  if (finished_) return;
  // Ending a POLL subscription: cancel, then collect the final status so gRPC frees the call.
  context_->TryCancel();
  ::gnmi::SubscribeResponse ignored;
  while (stream_->Read(&ignored)) {
  }
  (void)stream_->Finish();
}

void GrpcPollSession::watch() {
  std::unique_lock lock(watch_mutex_);
  while (!closing_) {
    if (!round_ends_) {
      watch_wake_.wait(lock);
      continue;
    }
    const auto ends = *round_ends_;
    if (watch_wake_.wait_until(lock, ends, [&] { return closing_ || round_ends_ != ends; }))
      continue;
    round_timed_out_ = true;
    round_ends_.reset();
    context_->TryCancel();
  }
}

GnmiResult<std::vector<GnmiNotification>> GrpcPollSession::next(
    std::optional<Duration> round_deadline) {
  if (!round_deadline) return round();
  {
    std::lock_guard lock(watch_mutex_);
    // The watchdog's entry point. Without it a round's Read could block for ever, so a
    // watchdog that fails cancels the call: the round then ends as a typed failure.
    if (!watchdog_.joinable())
      watchdog_ = std::thread([this] {
        if (what_escaped([this] { watch(); })) context_->TryCancel();
      });
    round_ends_ = std::chrono::steady_clock::now() + *round_deadline;
    round_timed_out_ = false;
    watch_wake_.notify_all();
  }
  auto answered = round();
  std::lock_guard lock(watch_mutex_);
  round_ends_.reset();
  watch_wake_.notify_all();
  if (!answered && round_timed_out_) {
    return GnmiFailure{GnmiFailure::Kind::timeout, client_.prefix("Subscribe POLL") +
                                                       "the round was not answered within " +
                                                       format_duration(*round_deadline)};
  }
  return answered;
}

GnmiResult<std::vector<GnmiNotification>> GrpcPollSession::round() {
  const std::string operation = "Subscribe POLL";
  if (finished_) {
    return GnmiFailure{GnmiFailure::Kind::internal,
                       client_.prefix(operation) + "the subscription has already ended"};
  }
  if (!first_) {
    ::gnmi::SubscribeRequest poll;
    poll.mutable_poll();
    if (!stream_->Write(poll)) {
      finished_ = true;
      return client_.failure(stream_->Finish(), operation, deadline_);
    }
  }
  first_ = false;
  std::vector<GnmiNotification> out;
  ::gnmi::SubscribeResponse response;
  while (stream_->Read(&response)) {
    if (response.sync_response()) return out;
    if (!response.has_update()) continue;
    auto converted = client_.convert(response.update(), operation);
    if (!converted) return converted.error();
    out.push_back(std::move(converted.value()));
  }
  finished_ = true;
  grpc::Status status = stream_->Finish();
  if (status.ok()) {
    return GnmiFailure{GnmiFailure::Kind::internal,
                       client_.prefix(operation) + "the target ended the subscription"};
  }
  return client_.failure(status, operation, deadline_);
}

GnmiResult<Ok> GrpcStream::run(
    const std::function<void(const GnmiNotification&)>& on_notification) {
  ::gnmi::SubscribeResponse response;
  while (stream_->Read(&response)) {
    if (!response.has_update()) continue;
    auto converted = client_.convert(response.update(), operation_);
    if (!converted) {
      context_->TryCancel();
      (void)stream_->Finish();
      finished_ = true;
      return converted.error();
    }
    on_notification(converted.value());
  }
  grpc::Status status = stream_->Finish();
  finished_ = true;
  if (stopped_) return Ok{};
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) return Ok{};
  if (status.ok()) {
    return GnmiFailure{GnmiFailure::Kind::internal,
                       client_.prefix(operation_) + "the target ended the stream"};
  }
  return client_.failure(status, operation_, deadline_);
}

}  // namespace

GnmiResult<std::unique_ptr<GnmiClient>> connect(const GnmiClientOptions& options) {
  std::string where = "gnmi: " + (options.device.empty() ? options.address : options.device) + ": ";
  if (options.address.empty()) {
    return GnmiFailure{GnmiFailure::Kind::internal, where + "no address given"};
  }
  if (options.max_receive_message_size < 1 ||
      options.max_receive_message_size > kMaxReceiveMessageSizeCeiling) {
    return GnmiFailure{GnmiFailure::Kind::internal,
                       where + "max_receive_message_size " +
                           std::to_string(options.max_receive_message_size) + " is outside 1 .. " +
                           std::to_string(kMaxReceiveMessageSizeCeiling)};
  }
  grpc::ChannelArguments arguments;
  // Replies as large as a whole route table (see kDefaultMaxReceiveMessageSize).
  arguments.SetMaxReceiveMessageSize(static_cast<int>(options.max_receive_message_size));
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    auto load = [](const std::string& path, std::string& into) -> bool {
      if (path.empty()) return true;
      auto text = read_file(path);
      if (!text) return false;
      into = std::move(*text);
      return true;
    };
    if (!load(options.ca_file, ssl.pem_root_certs)) {
      return GnmiFailure{GnmiFailure::Kind::tls, where + "cannot read CA file " + options.ca_file};
    }
    if (options.cert_file.empty() != options.key_file.empty()) {
      return GnmiFailure{GnmiFailure::Kind::tls,
                         where + "a client certificate needs both cert_file and key_file"};
    }
    if (!load(options.cert_file, ssl.pem_cert_chain)) {
      return GnmiFailure{GnmiFailure::Kind::tls,
                         where + "cannot read client certificate " + options.cert_file};
    }
    if (!load(options.key_file, ssl.pem_private_key)) {
      return GnmiFailure{GnmiFailure::Kind::tls,
                         where + "cannot read client key " + options.key_file};
    }
    credentials = grpc::SslCredentials(ssl);
    if (!options.tls_server_name.empty()) {
      arguments.SetSslTargetNameOverride(options.tls_server_name);
    }
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  auto channel = grpc::CreateCustomChannel(options.address, credentials, arguments);
  return std::unique_ptr<GnmiClient>(std::make_unique<GrpcGnmiClient>(options, std::move(channel)));
}

}  // namespace fabgate::gnmi
