// The floor of scripts/bench-routes: the least a program can do to hold a route table that a
// device printed with `ip -j route`: read the text into one padded buffer, walk it once with
// simdjson's On-Demand parser, and keep each route's key (address, length) and a next-hop id
// in a vector. No validation beyond simdjson's, no protocol, metric or next-hop texts, no output.
// Prints the routes read, the wall time and the peak RSS (getrusage).
//
//   bench_routes_floor FILE

#include <arpa/inet.h>
#include <simdjson.h>
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

struct FloorRoute {
  std::array<std::uint8_t, 16> address{};
  std::uint8_t length = 0;
  std::uint32_t nexthop = 0;
};

bool key_of(std::string_view dst, FloorRoute& route) {
  char text[64];
  auto slash = dst.find('/');
  std::string_view address = dst.substr(0, slash);
  if (address.size() >= sizeof text) return false;
  address.copy(text, address.size());
  text[address.size()] = '\0';
  route.length = slash == std::string_view::npos ? 32 : std::stoi(std::string(dst.substr(slash + 1)));
  return inet_pton(AF_INET, text, route.address.data()) == 1 ||
         inet_pton(AF_INET6, text, route.address.data()) == 1 || dst == "default";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_routes_floor FILE\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  simdjson::padded_string text;
  if (simdjson::padded_string::load(argv[1]).get(text)) {
    std::fprintf(stderr, "bench_routes_floor: cannot read %s\n", argv[1]);
    return 1;
  }
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  if (parser.iterate(text).get(document)) return 1;
  std::vector<FloorRoute> routes;
  std::unordered_map<std::string, std::uint32_t> hops;
  for (auto element : document.get_array()) {
    simdjson::ondemand::object object;
    if (element.get_object().get(object)) return 1;
    FloorRoute route;
    std::string_view hop;
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return 1;
      if (key == "dst") {
        std::string_view dst;
        if (field.value().get_string().get(dst) || !key_of(dst, route)) return 1;
      } else if (key == "gateway" || key == "dev") {
        if (hop.empty() && field.value().get_string().get(hop)) return 1;
      }
    }
    auto [id, added] = hops.try_emplace(std::string(hop), static_cast<std::uint32_t>(hops.size()));
    route.nexthop = id->second;
    routes.push_back(route);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("floor: %zu routes from %zu bytes in %.3f s, peak RSS %ld KiB\n", routes.size(),
              text.size(), wall, usage.ru_maxrss);
  return 0;
}
