#pragma once

// Route tables read straight from a device's output into the compare engine's compact table
// (gates/compare/route_table.h), never into a JSON tree: a fabric switch lists up to millions of
// routes, and a tree of them costs about 25 times the table (docs/benchmarks.md, "Route tables").

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>

#include "adapters/core/result.h"
#include "gates/compare/route_table.h"

namespace fabgate::snapshot {

// A device's route tables by family name ("ipv4", "ipv6"), as the snapshot's `routes` holds them.
using RouteTables = std::map<std::string, compare::RouteTable>;

// Reads `ip -j route` (`ip -j -6 route`) output into `table`, in batches of whole routes of about
// a megabyte (so simdjson's index costs a batch's size, not the table's). Each listed route is one with
// prefix (`default` is 0.0.0.0/0 or ::/0, an address alone its host route), protocol (`boot`
// when absent), metric (0 when absent), type when given and its next hops (`gateway`, else
// `dev:NAME`, from the route or from each of its `nexthops`). The table is not finalized.
// Malformed output is an error naming the field ("field '[0].metric' is a string, not an
// integer"), output nested deeper than 64 levels is refused before it is read, and nothing throws.
Expected<Ok, std::string> read_ip_routes(const std::string& output, compare::RouteTable& table);

// The snapshot's list for one table (docs/snapshot-format.md, `routes`): in key order, each
// {prefix, protocol, metric (when known), type (when known), nexthops (sorted), vrf (unless
// default)}.
nlohmann::json route_list_json(const compare::RouteTable& table);

// Writes the same list as JSON text, one route per line, each line prefixed by `indent`, through
// `write` in pieces of about `chunk` bytes, without building the list: what `fabgate snapshot`
// writes for a table of a million routes. `redact` is applied to each route's line (nullptr:
// none). Returns false as soon as `write` does.
template <typename Write, typename Redact>
bool write_route_list(const compare::RouteTable& table, std::string_view indent, Write&& write,
                      Redact&& redact, std::size_t chunk = 1u << 20);

// One route as its JSON text: {"prefix": "10.0.0.0/24", "protocol": "bgp", ...}.
void append_route_json(const compare::RouteTable& table, const std::string& vrf,
                       const compare::Route& route, std::string& out);

template <typename Write, typename Redact>
bool write_route_list(const compare::RouteTable& table, std::string_view indent, Write&& write,
                      Redact&& redact, std::size_t chunk) {
  std::string buffer = "[";
  std::string line;
  bool first = true;
  for (const auto& [vrf, routes] : table.vrfs()) {
    for (const auto& route : routes) {
      line.clear();
      append_route_json(table, vrf, route, line);
      buffer += first ? "\n" : ",\n";
      first = false;
      buffer += indent;
      buffer += redact(line);
      if (buffer.size() >= chunk) {
        if (!write(std::string_view(buffer))) return false;
        buffer.clear();
      }
    }
  }
  if (!first) {
    buffer += '\n';
    buffer += indent.substr(0, indent.size() >= 2 ? indent.size() - 2 : 0);
  }
  buffer += ']';
  return write(std::string_view(buffer));
}

}  // namespace fabgate::snapshot
