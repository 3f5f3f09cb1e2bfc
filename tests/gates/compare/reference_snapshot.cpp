// The snapshot reader fabgate used before simdjson (nlohmann::json's SAX parser), kept here
// as a reference: tests load the same documents both ways and expect the same snapshots and
// the same refusals (snapshot_equivalence_test.cpp). Not linked into fabgate.

#include "tests/gates/compare/reference_snapshot.h"

#include <vector>

#include "adapters/core/text.h"
#include "adapters/core/utf8.h"

namespace fabgate::compare::testing {

using nlohmann::json;

namespace {

// Builds a JSON tree for everything except `devices.<d>.routes.<family>` lists, which go
// into RouteTables as they stream past. One event at a time; no DOM of the routes exists.
class SnapshotSax {
 public:
  json root;
  std::map<std::string, std::map<std::string, RouteTable>> route_tables;
  std::string error;

  bool null() { return in_route() ? route_scalar(json()) : value(json()); }
  bool boolean(bool v) { return in_route() ? route_scalar(json(v)) : value(json(v)); }
  bool number_integer(json::number_integer_t v) {
    return in_route() ? route_scalar(json(v)) : value(json(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (in_route()) return route_unsigned(v);
    return value(json(v));
  }
  bool number_float(json::number_float_t v, const std::string&) {
    return in_route() ? route_scalar(json(v)) : value(json(v));
  }
  bool string(std::string& v) {
    if (in_route()) return route_string(v);
    return value(json(std::move(v)));
  }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) {
    if (!deeper()) return false;
    if (in_route()) return route_start_object();
    return open(json::object());
  }
  bool key(std::string& k) {
    if (in_route()) return route_key(k);
    keys_.back() = k;
    return true;
  }
  bool end_object() {
    --nesting_;
    if (in_route()) return route_end_object();
    return close();
  }
  bool start_array(std::size_t) {
    if (!deeper()) return false;
    if (in_route()) return route_start_array();
    if (at_route_list()) return begin_route_list();
    return open(json::array());
  }
  bool end_array() {
    --nesting_;
    if (in_route()) return route_end_array();
    return close();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    // The parser quotes what it last read, which may be the very bytes that are not UTF-8.
    error = "byte " + std::to_string(position) + ": " + escape_invalid_utf8(e.what());
    return false;
  }

 private:
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }

  // The parser itself keeps its nesting on the heap, but every reader after it (the tree's
  // consumers, the compare engine) recurses: depth is refused here, as the parser meets it.
  bool deeper() {
    if (++nesting_ <= kMaxSnapshotDepth) return true;
    std::vector<std::string> path;  // the first few keys: enough to find it, bounded in size
    for (std::size_t i = 0; i < keys_.size() && path.size() < 4; ++i)
      if (!keys_[i].empty()) path.push_back(keys_[i]);
    return fail("objects and arrays nested more than " + std::to_string(kMaxSnapshotDepth) +
                " levels deep (under '" + (in_route() ? where() : join(path, ".")) + "')");
  }

  // ---- generic tree -------------------------------------------------------------------------
  bool value(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return true;
    }
    json& parent = *stack_.back();
    if (parent.is_object())
      parent[keys_.back()] = std::move(v);
    else
      parent.push_back(std::move(v));
    return true;
  }
  bool open(json container) {
    json* slot;
    if (stack_.empty()) {
      root = std::move(container);
      slot = &root;
    } else if (stack_.back()->is_object()) {
      slot = &(*stack_.back())[keys_.back()];
      *slot = std::move(container);
    } else {
      stack_.back()->push_back(std::move(container));
      slot = &stack_.back()->back();
    }
    stack_.push_back(slot);
    keys_.emplace_back();
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  // ---- route lists --------------------------------------------------------------------------
  // The list at root.devices.<d>.routes.<family>: four objects deep, keyed as the format says.
  bool at_route_list() const {
    return stack_.size() == 4 && keys_[0] == "devices" && keys_[2] == "routes" &&
           stack_[3]->is_object();
  }
  bool in_route() const { return route_table_ != nullptr; }
  std::string where() const {
    return "devices." + device_ + ".routes." + family_ + "[" + std::to_string(route_index_) + "]";
  }

  bool begin_route_list() {
    device_ = keys_[1];
    family_ = keys_[3];
    Family family;
    if (family_ == "ipv4")
      family = Family::ipv4;
    else if (family_ == "ipv6")
      family = Family::ipv6;
    else
      return fail("devices." + device_ + ".routes." + family_ +
                  ": unknown address family (ipv4 or ipv6)");
    auto& tables = route_tables[device_];
    if (tables.count(family_))
      return fail("devices." + device_ + ".routes." + family_ + " is listed twice");
    route_table_ = &tables.emplace(family_, RouteTable(family)).first->second;
    route_index_ = 0;
    depth_ = 0;
    return true;
  }

  void reset_route() {
    prefix_.clear();
    vrf_ = "default";
    protocol_.clear();
    metric_.reset();
    nexthops_.clear();
    nexthop_views_.clear();
    has_prefix_ = false;
    route_key_.clear();
  }

  // depth_: 0 inside the list, 1 inside a route object, 2 inside its nexthops list; skip_ > 0
  // while skipping a value under a key this version does not know.
  bool route_start_object() {
    if (skip_ > 0) return ++skip_, true;
    if (depth_ == 0) {
      depth_ = 1;
      reset_route();
      return true;
    }
    if (depth_ == 1 && !route_key_.empty() && !known_route_key()) return skip_ = 1, true;
    return fail(where() + ": '" + route_key_ + "' must not be an object");
  }
  bool route_end_object() {
    if (skip_ > 0) {
      if (--skip_ == 0) route_key_.clear();
      return true;
    }
    depth_ = 0;
    if (!has_prefix_) return fail(where() + ": route has no 'prefix'");
    nexthop_views_.assign(nexthops_.begin(), nexthops_.end());
    std::string problem;
    if (!route_table_->add(vrf_, prefix_, protocol_, metric_, nexthop_views_, &problem))
      return fail(where() + ": " + problem);
    ++route_index_;
    return true;
  }
  bool route_start_array() {
    if (skip_ > 0) return ++skip_, true;
    if (depth_ == 1 && route_key_ == "nexthops") return depth_ = 2, true;
    if (depth_ == 1 && !known_route_key()) return skip_ = 1, true;
    return fail(where() + ": unexpected list");
  }
  bool route_end_array() {
    if (skip_ > 0) {
      if (--skip_ == 0) route_key_.clear();
      return true;
    }
    if (depth_ == 2) return depth_ = 1, true;
    // The route list itself ends.
    std::string problem;
    if (!route_table_->finalize(&problem))
      return fail("devices." + device_ + ".routes." + family_ + ": " + problem);
    route_table_ = nullptr;
    return true;
  }
  bool route_key(const std::string& k) {
    if (skip_ > 0) return true;
    route_key_ = k;
    return true;
  }
  bool known_route_key() const {
    return route_key_ == "prefix" || route_key_ == "vrf" || route_key_ == "protocol" ||
           route_key_ == "metric" || route_key_ == "nexthops";
  }
  bool route_string(std::string& v) {
    if (skip_ > 0) return true;
    if (depth_ == 2) {
      nexthops_.push_back(std::move(v));
      return true;
    }
    if (depth_ == 0) return fail(where() + ": a route must be an object");
    if (route_key_ == "prefix") {
      prefix_ = std::move(v);
      has_prefix_ = true;
    } else if (route_key_ == "vrf") {
      vrf_ = std::move(v);
    } else if (route_key_ == "protocol") {
      protocol_ = std::move(v);
    } else if (route_key_ == "metric" || route_key_ == "nexthops") {
      return fail(where() + ": '" + route_key_ + "' has the wrong type");
    }
    return true;
  }
  bool route_unsigned(json::number_unsigned_t v) {
    if (skip_ > 0) return true;
    if (depth_ == 1 && route_key_ == "metric") {
      if (v > 0xffffffffu)
        return fail(where() + ": metric " + std::to_string(v) + " is out of range");
      metric_ = static_cast<std::uint32_t>(v);
      return true;
    }
    return route_scalar(json(v));
  }
  bool route_scalar(const json&) {
    if (skip_ > 0) return true;
    if (depth_ == 0) return fail(where() + ": a route must be an object");
    if (depth_ == 1 && !known_route_key()) return true;  // unknown scalar key: ignored
    return fail(where() + ": '" + route_key_ + "' has the wrong type");
  }

  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  std::size_t nesting_ = 0;

  RouteTable* route_table_ = nullptr;
  std::string device_, family_, route_key_;
  std::size_t route_index_ = 0;
  int depth_ = 0;
  int skip_ = 0;
  std::string prefix_, vrf_, protocol_;
  bool has_prefix_ = false;
  std::optional<std::uint32_t> metric_;
  std::vector<std::string> nexthops_;
  std::vector<std::string_view> nexthop_views_;
};

}  // namespace

Result<Snapshot> parse_snapshot_reference(std::string_view text, const std::string& file_name) {
  SnapshotSax sax;
  bool parsed = false;
  try {
    parsed = json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const std::exception& e) {
    return Error::invalid_input("snapshot " + file_name + ": " + e.what());
  }
  if (!parsed)
    return Error::invalid_input("snapshot " + file_name + ": " +
                                (sax.error.empty() ? "not valid JSON" : sax.error));
  detail::ParsedDocument document{std::move(sax.root), std::move(sax.route_tables)};
  return detail::assemble_snapshot(document, file_name);
}

}  // namespace fabgate::compare::testing
