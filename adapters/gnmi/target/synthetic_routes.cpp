#include "adapters/gnmi/target/synthetic_routes.h"

#include <algorithm>

namespace fabgate::gnmi::target {

std::string synthetic_ipv4_prefix(std::size_t index) {
  const std::size_t first = 16 * 65536 + index;  // /24 number: 16.0.0.0/24 is 16 << 16
  return std::to_string((first >> 16) & 0xff) + "." + std::to_string((first >> 8) & 0xff) + "." +
         std::to_string(first & 0xff) + ".0/24";
}

std::vector<Ipv4Route> synthetic_ipv4_routes(std::size_t count) {
  count = std::min(count, kMaxSyntheticRoutes);
  std::vector<Ipv4Route> routes;
  routes.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Ipv4Route route;
    route.prefix = synthetic_ipv4_prefix(i);
    route.origin_protocol = "BGP";
    for (std::size_t hop : {i % 4, (i + 1) % 4}) {
      route.next_hops.push_back(
          {"10.255.0." + std::to_string(hop + 1), "eth" + std::to_string(hop + 1)});
    }
    routes.push_back(std::move(route));
  }
  return routes;
}

}  // namespace fabgate::gnmi::target
