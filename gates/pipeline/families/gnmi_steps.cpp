#include "gates/pipeline/families/gnmi_steps.h"

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

gnmi::GnmiResult<gnmi::SetResult> GrpcGnmiSteps::apply(
    const intent::Device& device, const std::vector<intent::GnmiSetOperation>& operations,
    Duration deadline, std::string_view) {
  auto set_operations = to_set_operations(device, operations);
  if (!set_operations.ok()) return set_operations.error();
  auto options = client_options_for(device);
  if (!options.ok()) return options.error();
  auto client = gnmi::connect(options.value());
  if (!client.ok()) return client.error();
  return client.value()->set(set_operations.value(), deadline);
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
