#include "gates/pipeline/families/gnmi_steps.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "adapters/core/text.h"
#include "adapters/core/time.h"
#include "gates/pipeline/reporting/evidence.h"

namespace fabgate::pipeline {
namespace {

gnmi::GnmiResult<std::vector<gnmi::SetOperation>> to_set_operations(
    const intent::Device& device, const std::vector<intent::GnmiSetOperation>& operations) {
  std::vector<gnmi::SetOperation> out;
  for (const auto& operation : operations) {
    auto kind = gnmi::set_kind_from_name(operation.op);
    // The loader accepts only the three names; this guards intent built some other way.
    if (!kind)
      return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                               "gnmi: " + device.name + ": unknown Set operation '" + operation.op +
                                   "' (update, replace or delete)"};
    out.push_back({*kind, operation.path, operation.value});
  }
  return out;
}

}  // namespace

std::string describe_gnmi_set(const std::vector<intent::GnmiSetOperation>& operations) {
  std::string text = "gnmi set";
  bool first = true;
  for (const auto& operation : operations) {
    text += first ? " " : "; ";
    first = false;
    text += operation.op + " " + operation.path;
    if (operation.op != "delete") text += " = " + operation.value;
  }
  return text;
}

gnmi::GnmiResult<gnmi::GnmiClientOptions> client_options_for(const intent::Device& device) {
  if (!device.gnmi)
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                             "gnmi: " + device.name + " has no gnmi endpoint in the inventory"};
  const auto& endpoint = *device.gnmi;
  gnmi::GnmiClientOptions options;
  options.device = device.name;
  // An IPv6 literal needs brackets before the port.
  bool ipv6_literal = endpoint.host.find(':') != std::string::npos;
  options.address = (ipv6_literal ? "[" + endpoint.host + "]" : endpoint.host) + ":" +
                    std::to_string(endpoint.port);
  options.tls = endpoint.tls;
  options.ca_file = expand_home(endpoint.ca_file);
  options.cert_file = expand_home(endpoint.cert_file);
  options.key_file = expand_home(endpoint.key_file);
  options.tls_server_name = endpoint.tls_server_name;
  if (endpoint.max_receive_message_size)
    options.max_receive_message_size = *endpoint.max_receive_message_size;
  auto login = gnmi::login_from_environment(endpoint.credentials_env);
  if (!login.ok()) {
    auto failure = login.error();
    failure.message = device.name + ": " + failure.message;
    return failure;
  }
  options.login = login.value();
  return options;
}

gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> connect_gnmi(const intent::Device& device) {
  auto options = client_options_for(device);
  if (!options.ok()) return options.error();
  return gnmi::connect(options.value());
}

namespace {
gnmi::GnmiFailure not_sent(gnmi::GnmiFailure failure) {
  failure.delivery = gnmi::GnmiFailure::Delivery::not_sent;
  return failure;
}
}  // namespace

gnmi::GnmiResult<gnmi::SetResult> GrpcGnmiSteps::apply(
    const intent::Device& device, const std::vector<intent::GnmiSetOperation>& operations,
    Duration deadline, std::string_view) {
  const auto start = std::chrono::steady_clock::now();
  auto set_operations = to_set_operations(device, operations);
  if (!set_operations.ok()) return not_sent(set_operations.error());
  auto options = client_options_for(device);
  if (!options.ok()) return not_sent(options.error());
  auto client = gnmi::connect(options.value());
  if (!client.ok()) return not_sent(client.error());
  // The channel connects lazily, and a Set that fails UNAVAILABLE cannot say whether it was
  // written before the connection went. So the connection is proven first with Capabilities:
  // when that fails (no connection, TLS, login, no answer), the Set was never written and the
  // step is not sent; once it answered, any failure of the Set leaves its fate unknown. An
  // UNIMPLEMENTED answer proves the connection too.
  auto answered = client.value()->capabilities(deadline);
  if (!answered.ok() && !answered.error().unimplemented) {
    auto failure = not_sent(answered.error());
    failure.message += " (connection check before the Set; the Set was not sent)";
    return failure;
  }
  const auto left =
      deadline - std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - start);
  if (left <= Duration::zero())
    return not_sent({gnmi::GnmiFailure::Kind::timeout,
                     "gnmi: " + device.name + ": Set not sent: the connection check used the " +
                         "whole step timeout of " + format_duration(deadline)});
  return client.value()->set(set_operations.value(), left);
}

gnmi::GnmiResult<gnmi::SetResult> FencedGnmiSteps::apply(
    const intent::Device& device, const std::vector<intent::GnmiSetOperation>& operations,
    Duration deadline, std::string_view purpose) {
  if (auto why = fence_.closed())
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                             "gnmi: Set not sent to " + device.name + ": " + *why +
                                 "; a run that may have lost its lease sends nothing more to "
                                 "any device",
                             false};
  return inner_.apply(device, operations, deadline, purpose);
}

gnmi::GnmiResult<gnmi::SetResult> RecordingGnmiSteps::apply(
    const intent::Device& device, const std::vector<intent::GnmiSetOperation>& operations,
    Duration deadline, std::string_view purpose) {
  TimePoint started = now_utc();
  auto result = inner_.apply(device, operations, deadline, purpose);
  nlohmann::json sent = nlohmann::json::array();
  for (const auto& operation : operations)
    sent.push_back({{"op", operation.op}, {"path", operation.path}, {"value", operation.value}});
  nlohmann::json record = {
      {"device", device.name},
      {"role", "change"},
      {"purpose", std::string(purpose)},
      {"transport", "gnmi"},
      {"command", describe_gnmi_set(operations)},
      {"operations", sent},
      {"started_at", format_utc(started)},
      {"deadline_ms", deadline.count()},
      {"duration_ms",
       std::chrono::duration_cast<std::chrono::milliseconds>(now_utc() - started).count()}};
  if (result.ok()) {
    record["applied"] = result->applied;
    record["timestamp_ns"] = result->timestamp_ns;
  } else {
    record["failure"] = std::string(gnmi::to_string(result.error().kind));
    record["message"] = result.error().message;
  }
  evidence_.append_command(record);
  return result;
}

}  // namespace fabgate::pipeline
