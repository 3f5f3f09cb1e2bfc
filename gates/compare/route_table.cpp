#include "gates/compare/route_table.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

namespace fabgate::compare {

std::uint32_t StringPool::intern(std::string_view text) {
  // Heterogeneous lookup needs C++20 transparent hashing that libstdc++ 12 lacks for
  // unordered_map, so the common short-string case builds a temporary key.
  std::string key(text);
  auto found = ids_.find(key);
  if (found != ids_.end()) return found->second;
  auto id = static_cast<std::uint32_t>(texts_.size());
  texts_.push_back(key);
  ids_.emplace(std::move(key), id);
  return id;
}

std::optional<std::uint32_t> StringPool::find(std::string_view text) const {
  auto found = ids_.find(std::string(text));
  if (found == ids_.end()) return std::nullopt;
  return found->second;
}

std::size_t RouteTable::SetHash::operator()(const std::vector<std::uint32_t>& ids) const {
  std::size_t hash = ids.size();
  for (auto id : ids) hash = hash * 1'000'003u ^ id;
  return hash;
}

namespace {

// Parses dotted-quad IPv4 without allocating: this runs a million times per snapshot.
bool parse_ipv4(std::string_view text, std::uint8_t* out) {
  int part = 0;
  std::size_t i = 0;
  while (part < 4) {
    if (i >= text.size()) return false;
    unsigned value = 0;
    std::size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      value = value * 10 + static_cast<unsigned>(text[i] - '0');
      if (++digits > 3) return false;
      ++i;
    }
    if (digits == 0 || value > 255) return false;
    out[part++] = static_cast<std::uint8_t>(value);
    if (part < 4) {
      if (i >= text.size() || text[i] != '.') return false;
      ++i;
    }
  }
  return i == text.size();
}

bool parse_ipv6(std::string_view text, std::uint8_t* out) {
  char buffer[INET6_ADDRSTRLEN + 1];
  if (text.size() >= sizeof buffer) return false;
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
  return ::inet_pton(AF_INET6, buffer, out) == 1;
}

bool parse_prefix(Family family, std::string_view prefix, Route& route) {
  auto slash = prefix.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view address = prefix.substr(0, slash);
  std::string_view length = prefix.substr(slash + 1);
  if (length.empty() || length.size() > 3) return false;
  unsigned bits = 0;
  for (char c : length) {
    if (c < '0' || c > '9') return false;
    bits = bits * 10 + static_cast<unsigned>(c - '0');
  }
  unsigned max_bits = family == Family::ipv4 ? 32 : 128;
  if (bits > max_bits) return false;
  route.length = static_cast<std::uint8_t>(bits);
  return family == Family::ipv4 ? parse_ipv4(address, route.address.data())
                                : parse_ipv6(address, route.address.data());
}

static_assert(sizeof(Route) == 28, "the bench and docs/compare.md rely on 28-byte routes");

// The address as two big-endian words, so keys compare as integers: sorting a million routes
// is most of a load, and memcmp through a function pointer was most of the sort.
inline std::uint64_t word(const Route& route, std::size_t index) {
  std::uint64_t value;
  std::memcpy(&value, route.address.data() + 8 * index, sizeof value);
  return __builtin_bswap64(value);
}

inline bool key_less(const Route& a, const Route& b) {
  std::uint64_t a0 = word(a, 0), b0 = word(b, 0);
  if (a0 != b0) return a0 < b0;
  std::uint64_t a1 = word(a, 1), b1 = word(b, 1);
  if (a1 != b1) return a1 < b1;
  return a.length < b.length;
}

inline bool key_equal(const Route& a, const Route& b) {
  return a.length == b.length &&
         std::memcmp(a.address.data(), b.address.data(), a.address.size()) == 0;
}

// Lambdas, so the algorithms inline the comparison instead of calling through a pointer.
constexpr auto kKeyLess = [](const Route& a, const Route& b) { return key_less(a, b); };
constexpr auto kKeyEqual = [](const Route& a, const Route& b) { return key_equal(a, b); };

// Sorts routes by key with a least-significant-digit radix sort over the 17 key bytes (the
// length, then the address from its last byte to its first), skipping every byte that is the
// same in all routes: a million IPv4 routes take four passes instead of ~20 million comparisons.
// Stable, linear, and needs one scratch copy of the table while it runs.
void radix_sort(std::vector<Route>& routes) {
  constexpr std::size_t kDigits = 17;  // digit 0: length; digit 1+i: address byte 15-i
  auto digit = [](const Route& route, std::size_t d) -> std::uint8_t {
    return d == 0 ? route.length : route.address[16 - d];
  };
  std::vector<std::array<std::size_t, 256>> counts(kDigits);
  for (auto& count : counts) count.fill(0);
  for (const Route& route : routes)
    for (std::size_t d = 0; d < kDigits; ++d) ++counts[d][digit(route, d)];
  std::vector<Route> scratch(routes.size());
  for (std::size_t d = 0; d < kDigits; ++d) {
    auto& count = counts[d];
    if (std::find(count.begin(), count.end(), routes.size()) != count.end()) continue;
    std::size_t offset = 0;
    for (auto& slot : count) offset += std::exchange(slot, offset);
    for (const Route& route : routes) scratch[count[digit(route, d)]++] = route;
    routes.swap(scratch);
  }
}

}  // namespace

RouteTable RouteTable::clone() const {
  RouteTable copy(family_);
  copy.vrfs_ = vrfs_;
  copy.strings_ = strings_;
  copy.nexthop_sets_ = nexthop_sets_;
  copy.set_ids_ = set_ids_;
  copy.types_ = types_;
  return copy;  // last_routes_ stays null: it would point into this table's map
}

bool RouteTable::add(std::string_view vrf, std::string_view prefix, std::string_view protocol,
                     std::optional<std::uint32_t> metric,
                     const std::vector<std::string_view>& nexthops, std::string* error,
                     std::string_view type) {
  Route route;
  if (!parse_prefix(family_, prefix, route)) {
    if (error)
      *error = "'" + std::string(prefix) + "' is not an " +
               (family_ == Family::ipv4 ? "IPv4" : "IPv6") + " prefix";
    return false;
  }
  std::uint32_t protocol_id = strings_.intern(protocol);
  if (protocol_id > 0xffff) {
    if (error) *error = "more than 65535 distinct route protocols";
    return false;
  }
  route.protocol = static_cast<std::uint16_t>(protocol_id);
  route.has_metric = metric.has_value();
  route.metric = metric.value_or(0);
  if (!type.empty()) {
    auto known = std::find(types_.begin(), types_.end(), type);
    if (known == types_.end()) {
      if (types_.size() >= 127) {
        if (error) *error = "more than 127 distinct route types";
        return false;
      }
      known = types_.insert(types_.end(), std::string(type));
    }
    route.type = static_cast<std::uint8_t>(1 + (known - types_.begin()));
  }

  // Next hops are a set: sort the ids and drop duplicates, then share identical sets.
  scratch_.clear();
  for (auto hop : nexthops) scratch_.push_back(strings_.intern(hop));
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  route.nexthops = nexthop_set_id(scratch_);

  if (last_routes_ == nullptr || vrf != last_vrf_) {
    last_vrf_ = std::string(vrf);
    last_routes_ = &vrfs_[last_vrf_];
  }
  last_routes_->push_back(route);
  return true;
}

std::uint32_t RouteTable::nexthop_set_id(std::vector<std::uint32_t>& ids) {
  auto found = set_ids_.find(ids);
  if (found != set_ids_.end()) return found->second;
  auto id = static_cast<std::uint32_t>(nexthop_sets_.size());
  nexthop_sets_.push_back(ids);
  set_ids_.emplace(ids, id);
  return id;
}

// Runs of one key (the routes are sorted, stably, so a run keeps the device's order) become
// their first route with the union of the run's next hops and the values of its lowest metric.
void RouteTable::merge_duplicates(std::vector<Route>& routes) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < routes.size();) {
    std::size_t end = i + 1;
    while (end < routes.size() && key_equal(routes[i], routes[end])) ++end;
    Route merged = routes[i];
    if (end - i > 1) {
      scratch_.clear();
      for (std::size_t j = i; j < end; ++j) {
        const Route& other = routes[j];
        const auto& hops = nexthop_sets_[other.nexthops];
        scratch_.insert(scratch_.end(), hops.begin(), hops.end());
        if (other.metric < merged.metric) {
          merged.metric = other.metric;
          merged.has_metric = other.has_metric;
          merged.protocol = other.protocol;
          merged.type = other.type;
        }
      }
      std::sort(scratch_.begin(), scratch_.end());
      scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
      merged.nexthops = nexthop_set_id(scratch_);
    }
    routes[kept++] = merged;
    i = end;
  }
  routes.resize(kept);
}

bool RouteTable::finalize(std::string* error, Duplicates duplicates) {
  for (auto& [vrf, routes] : vrfs_) {
    if (!std::is_sorted(routes.begin(), routes.end(), kKeyLess)) radix_sort(routes);
    auto duplicate = std::adjacent_find(routes.begin(), routes.end(), kKeyEqual);
    if (duplicate != routes.end()) {
      if (duplicates == Duplicates::merge) {
        merge_duplicates(routes);
      } else {
        if (error)
          *error = "prefix " + prefix_of(*duplicate) + " in vrf " + vrf + " is listed twice";
        return false;
      }
    }
    // Growth by doubling may leave up to half unused; a copy to shed it pays off past a quarter.
    if (routes.capacity() - routes.size() > routes.size() / 4) routes.shrink_to_fit();
  }
  return true;
}

std::size_t RouteTable::size() const {
  std::size_t total = 0;
  for (const auto& [vrf, routes] : vrfs_) total += routes.size();
  return total;
}

std::vector<std::string> RouteTable::nexthops_of(const Route& route) const {
  std::vector<std::string> out;
  for (auto id : nexthop_sets_[route.nexthops]) out.push_back(strings_.text(id));
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::uint32_t> RouteTable::find_nexthop_set(std::vector<std::uint32_t> ids) const {
  std::sort(ids.begin(), ids.end());
  auto found = set_ids_.find(ids);
  if (found == set_ids_.end()) return std::nullopt;
  return found->second;
}

std::string RouteTable::prefix_of(const Route& route) const {
  char buffer[INET6_ADDRSTRLEN];
  int af = family_ == Family::ipv4 ? AF_INET : AF_INET6;
  if (!::inet_ntop(af, route.address.data(), buffer, sizeof buffer)) return "?";
  return std::string(buffer) + "/" + std::to_string(route.length);
}

std::string_view RouteTable::type_of(const Route& route) const {
  return route.type == 0 ? std::string_view() : std::string_view(types_[route.type - 1u]);
}

std::string RouteTable::describe(const std::string& vrf, const Route& route) const {
  std::string out = prefix_of(route);
  if (vrf != "default") out += " vrf " + vrf;
  out += " " + strings_.text(route.protocol);
  if (route.has_metric) out += " metric " + std::to_string(route.metric);
  out += " via ";
  auto hops = nexthops_of(route);
  if (hops.empty()) out += "(none)";
  for (std::size_t i = 0; i < hops.size(); ++i) out += (i ? "," : "") + hops[i];
  return out;
}

namespace {

// Ids are local to each table; these caches translate the pre table's ids into the post
// table's once per distinct protocol or next-hop set, so the join compares integers.
class IdTranslator {
 public:
  IdTranslator(const RouteTable& pre, const RouteTable& post)
      : pre_(pre),
        post_(post),
        protocols_(pre.strings().size(), kUnknown),
        sets_(pre.nexthop_sets().size(), kUnknown) {}

  bool same_values(const Route& a, const Route& b) {
    if (a.has_metric != b.has_metric || a.metric != b.metric) return false;
    return translate_protocol(a.protocol) == b.protocol && translate_set(a.nexthops) == b.nexthops;
  }

 private:
  static constexpr std::int64_t kUnknown = -1;
  static constexpr std::int64_t kAbsent = -2;

  std::int64_t translate_string(std::uint32_t id) {
    auto found = post_.strings().find(pre_.strings().text(id));
    return found ? std::int64_t(*found) : kAbsent;
  }
  std::int64_t translate_protocol(std::uint16_t id) {
    if (protocols_[id] == kUnknown) protocols_[id] = translate_string(id);
    return protocols_[id];
  }
  std::int64_t translate_set(std::uint32_t id) {
    if (sets_[id] != kUnknown) return sets_[id];
    std::vector<std::uint32_t> ids;
    std::int64_t result = kAbsent;
    bool all_known = true;
    for (auto hop : pre_.nexthop_sets()[id]) {
      auto translated = translate_string(hop);
      if (translated < 0) {
        all_known = false;
        break;
      }
      ids.push_back(static_cast<std::uint32_t>(translated));
    }
    if (all_known) {
      if (auto found = post_.find_nexthop_set(std::move(ids))) result = *found;
    }
    sets_[id] = result;
    return result;
  }

  const RouteTable& pre_;
  const RouteTable& post_;
  std::vector<std::int64_t> protocols_;
  std::vector<std::int64_t> sets_;
};

void note(std::vector<std::string>& examples, std::size_t max, const std::string& text) {
  if (examples.size() < max) examples.push_back(text);
}

}  // namespace

RouteDiff diff_routes(const RouteTable& pre, const RouteTable& post, std::size_t max_examples) {
  RouteDiff diff;
  diff.pre_count = pre.size();
  diff.post_count = post.size();
  IdTranslator translator(pre, post);
  static const std::vector<Route> kNone;

  // Walk the union of VRF names; a VRF on one side only is all added or all removed.
  auto pre_vrf = pre.vrfs().begin();
  auto post_vrf = post.vrfs().begin();
  while (pre_vrf != pre.vrfs().end() || post_vrf != post.vrfs().end()) {
    const std::string* name;
    const std::vector<Route>* a = &kNone;
    const std::vector<Route>* b = &kNone;
    if (post_vrf == post.vrfs().end() ||
        (pre_vrf != pre.vrfs().end() && pre_vrf->first < post_vrf->first)) {
      name = &pre_vrf->first;
      a = &pre_vrf->second;
      ++pre_vrf;
    } else if (pre_vrf == pre.vrfs().end() || post_vrf->first < pre_vrf->first) {
      name = &post_vrf->first;
      b = &post_vrf->second;
      ++post_vrf;
    } else {
      name = &pre_vrf->first;
      a = &pre_vrf->second;
      b = &post_vrf->second;
      ++pre_vrf;
      ++post_vrf;
    }

    std::size_t i = 0, j = 0;
    while (i < a->size() || j < b->size()) {
      if (j == b->size() || (i < a->size() && key_less((*a)[i], (*b)[j]))) {
        ++diff.removed;
        note(diff.removed_examples, max_examples, pre.describe(*name, (*a)[i]));
        ++i;
      } else if (i == a->size() || key_less((*b)[j], (*a)[i])) {
        ++diff.added;
        note(diff.added_examples, max_examples, post.describe(*name, (*b)[j]));
        ++j;
      } else {
        if (!translator.same_values((*a)[i], (*b)[j])) {
          ++diff.changed;
          note(diff.changed_examples, max_examples,
               pre.describe(*name, (*a)[i]) + " -> " + post.describe(*name, (*b)[j]));
        }
        ++i;
        ++j;
      }
    }
  }
  return diff;
}

}  // namespace fabgate::compare
