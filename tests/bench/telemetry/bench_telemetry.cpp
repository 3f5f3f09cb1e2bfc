// bench_telemetry [DEVICES] [SAMPLES] [INTERFACES] [NEIGHBOURS]
//
// The telemetry layer's memory over a long change (issue 30, item 10): DEVICES streams
// (default 64) deliver SAMPLES samples each (default 600: 10 minutes of SAMPLE every 1 s) as
// fast as the layer takes them, each sample shaped as fabgate-gnmid streams it: one
// notification with INTERFACES interface state containers (default 64; oper-status, admin
// status, MTU and 16 counters, octet and packet counters rising every sample) and three with
// the NEIGHBOURS BGP neighbours (default 32; session-state, established-transitions, IPv4 and
// IPv6 received prefixes) at one reading timestamp. Every 60th sample one interface's
// in-errors rise (an event). Then the during window is cut and the session stopped, as a
// change that ends after acceptance does.
//
// Prints the resident memory before the streams open, after every sample was taken (what the
// layer holds for the whole change), the peak (VmHWM: the window end included), and the wall
// time of delivery and of the window end. Not a test: nothing is asserted.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gates/pipeline/families/telemetry_layer.h"

namespace {

using namespace fabgate;
using Steady = std::chrono::steady_clock;

constexpr std::int64_t kBase = 1'796'100'000'000'000'000;
constexpr std::int64_t kSecond = 1'000'000'000;

struct Shape {
  int devices = 64, samples = 600, interfaces = 64, neighbours = 32;
};

std::string neighbour_address(int n) {
  return "10." + std::to_string(n / 250) + "." + std::to_string(n % 250) + ".1";
}

const std::string kNeighbor =
    "/network-instances/network-instance[name=default]/protocols/"
    "protocol[identifier=BGP][name=bgp]/bgp/neighbors/neighbor[neighbor-address=";

// The paths of one device's sample, parsed once.
struct Paths {
  std::vector<std::pair<std::string, gnmi::GnmiPath>> interfaces;  // name, its state
  std::vector<gnmi::GnmiPath> sessions, transitions, prefixes;     // prefixes: 2 per neighbour
};

Paths paths_of(const Shape& shape) {
  Paths paths;
  for (int i = 0; i < shape.interfaces; ++i) {
    const std::string name = "swp" + std::to_string(i + 1);
    paths.interfaces.push_back(
        {name, gnmi::parse_path("/interfaces/interface[name=" + name + "]/state").value()});
  }
  for (int n = 0; n < shape.neighbours; ++n) {
    const std::string base = kNeighbor + neighbour_address(n) + "]";
    paths.sessions.push_back(gnmi::parse_path(base + "/state/session-state").value());
    paths.transitions.push_back(gnmi::parse_path(base + "/state/established-transitions").value());
    for (const char* family : {"IPV4_UNICAST", "IPV6_UNICAST"})
      paths.prefixes.push_back(
          gnmi::parse_path(base + "/afi-safis/afi-safi[afi-safi-name=openconfig-bgp-types:" +
                           family + "]/state/prefixes/received")
              .value());
  }
  return paths;
}

// Sample `index` of one device: the interface notification and the three BGP ones, as
// fabgate-gnmid sends them (JSON_IETF: 64-bit counters as strings).
std::vector<gnmi::GnmiNotification> sample(const Paths& paths, int index) {
  const std::int64_t at = kBase + index * kSecond;
  gnmi::GnmiNotification links, sessions, transitions, prefixes;
  links.timestamp_ns = sessions.timestamp_ns = transitions.timestamp_ns = prefixes.timestamp_ns =
      at;
  const auto count = [&](std::int64_t base) {
    return "\"" + std::to_string(base + index * 1000) + "\"";
  };
  for (std::size_t i = 0; i < paths.interfaces.size(); ++i) {
    const auto& [name, path] = paths.interfaces[i];
    const auto n = static_cast<std::int64_t>(i);
    std::string state =
        "{\"name\":\"" + name +
        "\",\"type\":\"iana-if-type:ethernetCsmacd\",\"mtu\":9216,"
        "\"admin-status\":\"UP\",\"oper-status\":\"UP\",\"counters\":{" +
        "\"in-octets\":" + count(1'000'000'000 + n) + ",\"in-pkts\":" + count(1'000'000 + n) +
        ",\"in-unicast-pkts\":" + count(900'000 + n) +
        ",\"in-broadcast-pkts\":\"12\",\"in-multicast-pkts\":\"340\","
        "\"in-discards\":\"0\",\"in-errors\":\"" +
        std::to_string(i == 0 ? index / 60 : 0) +
        "\",\"in-fcs-errors\":\"0\",\"out-octets\":" + count(2'000'000'000 + n) +
        ",\"out-pkts\":" + count(2'000'000 + n) + ",\"out-unicast-pkts\":" + count(1'900'000 + n) +
        ",\"out-broadcast-pkts\":\"3\",\"out-multicast-pkts\":\"120\","
        "\"out-discards\":\"0\",\"out-errors\":\"0\","
        "\"carrier-transitions\":\"2\"}}";
    links.updates.push_back({path, std::move(state)});
  }
  for (std::size_t n = 0; n < paths.sessions.size(); ++n) {
    sessions.updates.push_back({paths.sessions[n], "\"ESTABLISHED\""});
    transitions.updates.push_back({paths.transitions[n], "\"1\""});
  }
  for (std::size_t p = 0; p < paths.prefixes.size(); ++p)
    prefixes.updates.push_back({paths.prefixes[p], std::to_string(120 + p / 2)});
  return {links, sessions, transitions, prefixes};
}

std::atomic<int> finished{0};

class BenchStream final : public gnmi::GnmiStream {
 public:
  explicit BenchStream(Shape shape) : shape_(shape), paths_(paths_of(shape)) {}
  gnmi::GnmiResult<Ok> run(
      const std::function<void(const gnmi::GnmiNotification&)>& on_notification) override {
    for (int i = 0; i < shape_.samples; ++i) {
      for (const auto& notification : sample(paths_, i)) on_notification(notification);
      std::lock_guard lock(mutex_);
      if (stopped_) break;
    }
    ++finished;
    std::unique_lock lock(mutex_);
    stop_.wait(lock, [&] { return stopped_; });
    return Ok{};
  }
  void stop() override {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    stop_.notify_all();
  }

 private:
  Shape shape_;
  Paths paths_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopped_ = false;
};

class BenchClient final : public gnmi::GnmiClient {
 public:
  explicit BenchClient(Shape shape) : shape_(shape) {}
  gnmi::GnmiResult<gnmi::Capabilities> capabilities(Duration) override { return refuse(); }
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> get(const std::vector<std::string>&,
                                                            gnmi::Encoding, gnmi::DataType,
                                                            Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<gnmi::SetResult> set(const std::vector<gnmi::SetOperation>&, Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>> subscribe_once(
      const std::vector<std::string>&, gnmi::Encoding, Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiPollSession>> subscribe_poll(
      const std::vector<std::string>&, gnmi::Encoding, Duration) override {
    return refuse();
  }
  gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiStream>> subscribe_stream(
      const std::vector<std::string>&, gnmi::Encoding, Duration, Duration) override {
    return std::unique_ptr<gnmi::GnmiStream>(std::make_unique<BenchStream>(shape_));
  }

 private:
  static gnmi::GnmiFailure refuse() { return {gnmi::GnmiFailure::Kind::rejected, "bench"}; }
  Shape shape_;
};

// A line of /proc/self/status in MiB ("VmRSS", "VmHWM").
double status_mib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + std::strlen(field) + 1) / 1024;
  return 0;
}

double seconds_since(Steady::time_point from) {
  return std::chrono::duration<double>(Steady::now() - from).count();
}

}  // namespace

int main(int argc, char** argv) {
  Shape shape;
  if (argc > 1) shape.devices = std::atoi(argv[1]);
  if (argc > 2) shape.samples = std::atoi(argv[2]);
  if (argc > 3) shape.interfaces = std::atoi(argv[3]);
  if (argc > 4) shape.neighbours = std::atoi(argv[4]);
  std::printf(
      "telemetry bench: %d devices x %d samples (SAMPLE 1 s), %d interfaces and %d BGP "
      "neighbours each\n",
      shape.devices, shape.samples, shape.interfaces, shape.neighbours);
  intent::Inventory inventory;
  for (int d = 0; d < shape.devices; ++d) {
    intent::Device device;
    device.name = "leaf" + std::to_string(d + 1);
    device.gnmi = intent::GnmiEndpoint{.host = "127.0.0.1", .port = 1, .tls = false};
    inventory.devices.push_back(device);
  }
  std::vector<pipeline::TelemetrySubject> subjects;
  for (const auto& device : inventory.devices) subjects.push_back({&device, "target"});
  pipeline::GnmiConnector connect =
      [&](const intent::Device&) -> gnmi::GnmiResult<std::unique_ptr<gnmi::GnmiClient>> {
    return std::unique_ptr<gnmi::GnmiClient>(std::make_unique<BenchClient>(shape));
  };
  const double idle = status_mib("VmRSS:");
  const auto began = Steady::now();
  {
    pipeline::TelemetrySession session(connect, subjects, Duration{1000},
                                       {Duration{3'600'000}, {}});
    session.start(Duration{3'600'000}, Duration{60'000});
    while (finished.load() < shape.devices)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double delivered_s = seconds_since(began);
    const double held = status_mib("VmRSS:");
    const auto cut_began = Steady::now();
    auto during = session.cut(pipeline::Flaps::judged);
    const double cut_s = seconds_since(cut_began);
    auto rollback = session.stop();
    std::size_t samples = 0, events = 0;
    for (const auto& device : during.devices) {
      samples += device.samples;
      events += device.events.size();
    }
    std::printf("delivered: %.2f s for %zu notifications (%s)\n", delivered_s, samples,
                std::string(to_string(during.verdict)).c_str());
    std::printf("events in the during window: %zu\n", events);
    std::printf("window end (cut): %.2f s\n", cut_s);
    std::printf(
        "RSS idle: %.1f MiB; after every sample: %.1f MiB (%.1f MiB held); peak: %.1f MiB\n", idle,
        held, held - idle, status_mib("VmHWM:"));
    (void)rollback;
  }
  std::printf("total: %.2f s\n", seconds_since(began));
  return 0;
}
