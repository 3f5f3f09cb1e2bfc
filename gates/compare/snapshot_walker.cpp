#include "gates/compare/snapshot_walker.h"

#include <charconv>
#include <utility>

#include "adapters/core/text.h"
#include "adapters/core/thread_entry.h"

namespace fabgate::compare::reading {
namespace {

// RFC 8259's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. simdjson 3.0
// reads a leading zero ("01") as a number; JSON does not.
bool is_json_number(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t'))
    token.remove_suffix(1);
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') ++i;
    return i - start;
  };
  if (i < token.size() && token[i] == '-') ++i;
  if (i < token.size() && token[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < token.size() && token[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == token.size();
}

// The route keys the format knows (docs/snapshot-format.md); any other key is checked as JSON
// and ignored.
enum class RouteKey { prefix, vrf, protocol, metric, nexthops, other };

RouteKey route_key(std::string_view key) {
  if (key == "prefix") return RouteKey::prefix;
  if (key == "vrf") return RouteKey::vrf;
  if (key == "protocol") return RouteKey::protocol;
  if (key == "metric") return RouteKey::metric;
  if (key == "nexthops") return RouteKey::nexthops;
  return RouteKey::other;
}

}  // namespace

// ---- TableBuilder ---------------------------------------------------------------------------

TableBuilder::TableBuilder(bool threaded) {
  if (threaded) worker_ = std::thread([this] { work(); });
}

TableBuilder::List& TableBuilder::begin_list(std::string device, std::string family,
                                             RouteTable& table) {
  lists_.push_back(List{std::move(device), std::move(family), &table});
  return lists_.back();
}

bool TableBuilder::add(const List& list, std::size_t index, std::string_view vrf,
                       std::string_view prefix, std::string_view protocol,
                       std::optional<std::uint32_t> metric,
                       const std::vector<std::string_view>& nexthops) {
  Item item{&list,
            index,
            false,
            vrf,
            prefix,
            protocol,
            metric,
            static_cast<std::uint32_t>(batch_.hops.size()),
            static_cast<std::uint32_t>(nexthops.size())};
  batch_.hops.insert(batch_.hops.end(), nexthops.begin(), nexthops.end());
  batch_.items.push_back(item);
  return flush_if_full();
}

bool TableBuilder::end_list(const List& list) {
  batch_.items.push_back(Item{&list, 0, true, {}, {}, {}, std::nullopt, 0, 0});
  return flush_if_full();
}

const std::string& TableBuilder::finish() {
  if (!worker_.joinable()) {
    build(batch_);
    batch_ = Batch{};
    return error_;
  }
  push(std::move(batch_));
  batch_ = Batch{};
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  ready_.notify_all();
  worker_.join();
  return error_;
}

bool TableBuilder::flush_if_full() {
  if (!worker_.joinable()) {  // at once: one route at a time
    build(batch_);
    batch_.items.clear();
    batch_.hops.clear();
    return error_.empty();
  }
  if (batch_.items.size() >= kBatchRoutes) {
    push(std::move(batch_));
    batch_ = Batch{};
    batch_.items.reserve(kBatchRoutes);
  }
  return !failed_.load(std::memory_order_relaxed);
}

void TableBuilder::push(Batch batch) {
  std::unique_lock lock(mutex_);
  space_.wait(lock, [&] { return queue_.size() < kMaxQueued; });
  queue_.push_back(std::move(batch));
  lock.unlock();
  ready_.notify_one();
}

void TableBuilder::work() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !queue_.empty() || done_; });
      if (queue_.empty()) return;
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    space_.notify_one();
    // The worker thread's entry point: a throw while building (no memory for a huge table)
    // fails the read like a bad route does, and the worker goes on draining the queue (the
    // reader may be waiting for space), building nothing more.
    if (auto what = what_escaped([&] { build(batch); }))
      fail("internal error while building the route tables: " + *what);
  }
}

void TableBuilder::build(const Batch& batch) {
  for (const Item& item : batch.items) {
    if (!error_.empty()) return;
    const List& list = *item.list;
    std::string problem;
    if (item.end) {
      if (!list.table->finalize(&problem))
        fail("devices." + list.device + ".routes." + list.family + ": " + problem);
      continue;
    }
    hops_.assign(batch.hops.begin() + item.hops_begin,
                 batch.hops.begin() + item.hops_begin + item.hops_count);
    if (!list.table->add(item.vrf, item.prefix, item.protocol, item.metric, hops_, &problem))
      fail("devices." + list.device + ".routes." + list.family + "[" + std::to_string(item.index) +
           "]: " + problem);
  }
}

void TableBuilder::fail(std::string message) {
  error_ = std::move(message);
  failed_.store(true, std::memory_order_relaxed);
}

// ---- SnapshotWalker -------------------------------------------------------------------------

bool SnapshotWalker::walk() {
  ondemand::json_type type;
  if (auto code = document_.type().get(type)) return fail_json(code);
  if (type == ondemand::json_type::object) {
    ondemand::value root;
    if (auto code = document_.get_value().get(root)) return fail_json(code);
    if (!walk_root(root)) return false;
  } else if (type == ondemand::json_type::array) {
    ondemand::value root;
    if (auto code = document_.get_value().get(root)) return fail_json(code);
    if (!to_json(root, parsed.root)) return false;
  } else {
    return true;  // a scalar document: the root stays null, and the format check refuses it
  }
  // Anything after the root value is not part of the document.
  const char* after = nullptr;
  if (!document_.current_location().get(after) && after < text_.data() + text_.size())
    return fail_at(after, "more text after the end of the document");
  return true;
}

// ---- errors ---------------------------------------------------------------------------------
bool SnapshotWalker::fail(std::string message) {
  error = std::move(message);
  return false;
}

bool SnapshotWalker::fail_at(const char* at, const std::string& what) {
  return fail(place(text_, static_cast<std::size_t>(at - text_.data())) + ": " + what);
}

// A parse error from simdjson: at the iterator's place when it knows one.
bool SnapshotWalker::fail_json(simdjson::error_code code) {
  std::string what = code == simdjson::INCORRECT_TYPE || code == simdjson::N_ATOM_ERROR ||
                             code == simdjson::T_ATOM_ERROR || code == simdjson::F_ATOM_ERROR
                         ? "not valid JSON (a value is misspelt or missing)"
                     : code == simdjson::TAPE_ERROR
                         ? "not valid JSON (a comma, colon, bracket or key is missing or extra)"
                         : std::string("not valid JSON: ") + simdjson::error_message(code);
  const char* at = nullptr;
  if (document_.current_location().get(at)) return fail("at the end of the text: " + what);
  return fail_at(at, what);
}

bool SnapshotWalker::fail_at_value(ondemand::value& value, simdjson::error_code code) {
  std::string_view token = value.raw_json_token();
  if (!token.empty())
    return fail_at(token.data(), std::string("not valid JSON: ") + simdjson::error_message(code));
  return fail_json(code);
}

// The parsers after this one (the tree's consumers, the compare engine) recurse: depth is
// refused here, as the walk meets it.
bool SnapshotWalker::deeper() {
  if (++nesting_ <= kMaxSnapshotDepth) return true;
  std::vector<std::string> path;  // the first few keys: enough to find it, bounded in size
  for (std::size_t i = 0; i < keys_.size() && path.size() < 4; ++i)
    if (!keys_[i].empty()) path.push_back(keys_[i]);
  return fail("objects and arrays nested more than " + std::to_string(kMaxSnapshotDepth) +
              " levels deep (under '" + (in_route_ ? where() : join(path, ".")) + "')");
}

// ---- strings --------------------------------------------------------------------------------
// A key as text: straight from the input when it has no escapes (the usual case), else
// unescaped by simdjson into its string buffer.
bool SnapshotWalker::key_of(ondemand::field& field, std::string_view& key) {
  const char* start = field.key().raw();
  const char* at = start;
  while (*at != '"' && *at != '\\') ++at;  // the key is closed: simdjson checked every string
  if (*at == '"') {
    key = std::string_view(start, static_cast<std::size_t>(at - start));
    return true;
  }
  if (auto code = field.unescaped_key().get(key)) return fail_json(code);
  return true;
}

// A string value as text, the same way; the view lives as long as the document.
bool SnapshotWalker::string_of(ondemand::value& value, std::string_view& out) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t'))
    token.remove_suffix(1);
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
    std::string_view inner = token.substr(1, token.size() - 2);
    if (inner.find('\\') == std::string_view::npos) {
      out = inner;
      return true;
    }
  }
  if (auto code = value.get_string().get(out)) return fail_at_value(value, code);
  return true;
}

// ---- generic tree ---------------------------------------------------------------------------
bool SnapshotWalker::number_to_json(ondemand::value& value, json& out) {
  std::string_view token = value.raw_json_token();
  if (!is_json_number(token)) return fail_at(token.data(), "not valid JSON (a malformed number)");
  ondemand::number_type type;
  if (auto code = value.get_number_type().get(type)) return fail_at_value(value, code);
  if (type != ondemand::number_type::floating_point_number) {
    if (token.front() == '-') {
      std::int64_t number;
      if (!value.get_int64().get(number)) return out = number, true;
    } else {
      std::uint64_t number;
      if (!value.get_uint64().get(number)) return out = number, true;
    }
    // An integer beyond 64 bits: a double, as nlohmann::json and most JSON readers keep it.
  }
  double number;
  if (auto code = value.get_double().get(number)) {
    // simdjson reads integers only up to 64 bits; longer ones are parsed as a double here.
    while (!token.empty() &&
           std::string_view(" \t\r\n,]}").find(token.back()) != std::string_view::npos)
      token.remove_suffix(1);
    auto [end, problem] = std::from_chars(token.data(), token.data() + token.size(), number);
    if (problem != std::errc() || end != token.data() + token.size())
      return fail_at(token.data(), "the number " + std::string(token.substr(0, 40)) +
                                       " is not valid or out of range");
    (void)code;
  }
  out = number;
  return true;
}

bool SnapshotWalker::to_json(ondemand::value& value, json& out) {
  ondemand::json_type type;
  if (auto code = value.type().get(type)) return fail_at_value(value, code);
  switch (type) {
    case ondemand::json_type::object: {
      if (!deeper()) return false;
      ondemand::object object;
      if (auto code = value.get_object().get(object)) return fail_at_value(value, code);
      out = json::object();
      keys_.emplace_back();
      for (auto field_result : object) {
        ondemand::field field;
        if (auto code = std::move(field_result).get(field)) return fail_json(code);
        std::string_view key;
        if (!key_of(field, key)) return false;
        keys_.back().assign(key);
        json child;
        if (!to_json(field.value(), child)) return false;
        out[keys_.back()] = std::move(child);  // a repeated key: the last one counts
      }
      keys_.pop_back();
      --nesting_;
      return true;
    }
    case ondemand::json_type::array: {
      if (!deeper()) return false;
      ondemand::array array;
      if (auto code = value.get_array().get(array)) return fail_at_value(value, code);
      out = json::array();
      keys_.emplace_back();
      for (auto element_result : array) {
        ondemand::value element;
        if (auto code = std::move(element_result).get(element)) return fail_json(code);
        json child;
        if (!to_json(element, child)) return false;
        out.push_back(std::move(child));
      }
      keys_.pop_back();
      --nesting_;
      return true;
    }
    case ondemand::json_type::string: {
      std::string_view text;
      if (auto code = value.get_string().get(text)) return fail_at_value(value, code);
      out = std::string(text);
      return true;
    }
    case ondemand::json_type::number:
      return number_to_json(value, out);
    case ondemand::json_type::boolean: {
      bool flag;
      if (auto code = value.get_bool().get(flag)) return fail_at_value(value, code);
      out = flag;
      return true;
    }
    case ondemand::json_type::null: {
      bool is_null = false;
      if (value.is_null().get(is_null) || !is_null)
        return fail_at_value(value, simdjson::N_ATOM_ERROR);
      out = nullptr;
      return true;
    }
  }
  return fail_json(simdjson::INCORRECT_TYPE);
}

bool SnapshotWalker::to_json(simdjson::simdjson_result<ondemand::value> result, json& out) {
  ondemand::value value;
  if (auto code = std::move(result).get(value)) return fail_json(code);
  return to_json(value, out);
}

// Runs `each(key, value)` over an object's fields, keeping the key path for messages.
template <class Each>
bool SnapshotWalker::walk_object(ondemand::value& value, Each each) {
  if (!deeper()) return false;
  ondemand::object object;
  if (auto code = value.get_object().get(object)) return fail_at_value(value, code);
  keys_.emplace_back();
  for (auto field_result : object) {
    ondemand::field field;
    if (auto code = std::move(field_result).get(field)) return fail_json(code);
    std::string_view key;
    if (!key_of(field, key)) return false;
    keys_.back().assign(key);
    if (!each(keys_.back(), field.value())) return false;
  }
  keys_.pop_back();
  --nesting_;
  return true;
}

bool SnapshotWalker::is_object(ondemand::value& value, bool* yes) {
  ondemand::json_type type;
  if (auto code = value.type().get(type)) return fail_at_value(value, code);
  *yes = type == ondemand::json_type::object;
  return true;
}

// root -> devices -> <device> -> routes -> <family>: the only path where route lists live.
bool SnapshotWalker::walk_root(ondemand::value& root) {
  parsed.root = json::object();
  return walk_object(root, [&](const std::string& key, ondemand::value& value) {
    bool object = false;
    if (!is_object(value, &object)) return false;
    if (key != "devices" || !object) return to_json(value, parsed.root[key]);
    json& devices = parsed.root[key] = json::object();
    return walk_object(value, [&](const std::string& name, ondemand::value& tree) {
      std::string device = name;
      bool device_object = false;
      if (!is_object(tree, &device_object)) return false;
      if (!device_object) return to_json(tree, devices[device]);
      json& facts = devices[device] = json::object();
      return walk_object(tree, [&](const std::string& category, ondemand::value& content) {
        bool routes_object = false;
        if (!is_object(content, &routes_object)) return false;
        if (category != "routes" || !routes_object) return to_json(content, facts[category]);
        json& routes = facts[category] = json::object();
        return walk_object(content, [&](const std::string& family, ondemand::value& list) {
          ondemand::json_type type;
          if (auto code = list.type().get(type)) return fail_at_value(list, code);
          if (type != ondemand::json_type::array) return to_json(list, routes[family]);
          return read_route_list(device, family, list);
        });
      });
    });
  });
}

// ---- route lists ----------------------------------------------------------------------------
std::string SnapshotWalker::where() const {
  return "devices." + device_ + ".routes." + family_ + "[" + std::to_string(route_index_) + "]";
}

bool SnapshotWalker::read_route_list(const std::string& device, const std::string& family,
                                     ondemand::value& value) {
  if (!deeper()) return false;
  device_ = device;
  family_ = family;
  Family kind;
  if (family == "ipv4")
    kind = Family::ipv4;
  else if (family == "ipv6")
    kind = Family::ipv6;
  else
    return fail("devices." + device + ".routes." + family +
                ": unknown address family (ipv4 or ipv6)");
  auto& tables = parsed.route_tables[device];
  if (tables.count(family))
    return fail("devices." + device + ".routes." + family + " is listed twice");
  RouteTable& table = tables.emplace(family, RouteTable(kind)).first->second;
  const TableBuilder::List& target = builder_.begin_list(device, family, table);
  ondemand::array list;
  if (auto code = value.get_array().get(list)) return fail_at_value(value, code);
  in_route_ = true;
  route_index_ = 0;
  for (auto element_result : list) {
    ondemand::value route;
    if (auto code = std::move(element_result).get(route)) return fail_json(code);
    if (!read_route(route, target)) return false;
    ++route_index_;
  }
  in_route_ = false;
  if (!builder_.end_list(target)) return builder_failed();
  --nesting_;
  return true;
}

// One route object. Wrong types are named as the format's reader always named them.
bool SnapshotWalker::read_route(ondemand::value& value, const TableBuilder::List& target) {
  ondemand::json_type type;
  if (auto code = value.type().get(type)) return fail_at_value(value, code);
  if (type == ondemand::json_type::array) {
    if (!deeper()) return false;
    return fail(where() + ": unexpected list");
  }
  if (type != ondemand::json_type::object) {
    json ignored;  // the scalar must still be valid JSON
    if (!to_json(value, ignored)) return false;
    return fail(where() + ": a route must be an object");
  }
  if (!deeper()) return false;
  ondemand::object object;
  if (auto code = value.get_object().get(object)) return fail_at_value(value, code);

  std::string_view prefix, vrf = "default", protocol;
  bool has_prefix = false;
  std::optional<std::uint32_t> metric;
  nexthops_.clear();
  for (auto field_result : object) {
    ondemand::field field;
    if (auto code = std::move(field_result).get(field)) return fail_json(code);
    std::string_view key;
    if (!key_of(field, key)) return false;
    ondemand::value& item = field.value();
    ondemand::json_type item_type;
    if (auto code = item.type().get(item_type)) return fail_at_value(item, code);
    RouteKey known = route_key(key);
    if (known == RouteKey::other) {
      if (key.empty() && item_type == ondemand::json_type::object)
        return fail(where() + ": '' must not be an object");
      json ignored;  // a key this version does not know: checked, then ignored
      if (!to_json(item, ignored)) return false;
      continue;
    }
    if (item_type == ondemand::json_type::object) {
      if (!deeper()) return false;
      return fail(where() + ": '" + std::string(key) + "' must not be an object");
    }
    if (item_type == ondemand::json_type::array && known != RouteKey::nexthops) {
      if (!deeper()) return false;
      return fail(where() + ": unexpected list");
    }
    switch (known) {
      case RouteKey::prefix:
      case RouteKey::vrf:
      case RouteKey::protocol: {
        if (item_type != ondemand::json_type::string) return wrong_type(item, key);
        std::string_view text;
        if (!string_of(item, text)) return false;
        if (known == RouteKey::prefix) {
          prefix = text;
          has_prefix = true;
        } else if (known == RouteKey::vrf) {
          vrf = text;
        } else {
          protocol = text;
        }
        break;
      }
      case RouteKey::metric: {
        if (item_type != ondemand::json_type::number) return wrong_type(item, key);
        std::uint32_t number = 0;
        if (!read_metric(item, &number)) return false;
        metric = number;
        break;
      }
      case RouteKey::nexthops:
        if (item_type != ondemand::json_type::array) return wrong_type(item, key);
        if (!read_nexthops(item)) return false;
        break;
      case RouteKey::other:
        break;
    }
  }
  --nesting_;
  if (!has_prefix) return fail(where() + ": route has no 'prefix'");
  if (!builder_.add(target, route_index_, vrf, prefix, protocol, metric, nexthops_))
    return builder_failed();
  return true;
}

// The builder failed (its message wins, see TableBuilder): stop walking.
bool SnapshotWalker::builder_failed() {
  return fail("");
}

// A value of the wrong type for a known key: still checked as JSON first, so a misspelt
// literal is called that rather than a wrong type.
bool SnapshotWalker::wrong_type(ondemand::value& item, std::string_view key) {
  json ignored;
  if (!to_json(item, ignored)) return false;
  return fail(where() + ": '" + std::string(key) + "' has the wrong type");
}

// A metric is an unsigned integer up to 2^32-1; negative numbers, fractions and integers
// beyond 64 bits are the wrong type, as they always were.
bool SnapshotWalker::read_metric(ondemand::value& item, std::uint32_t* metric) {
  std::string_view token = item.raw_json_token();
  if (!is_json_number(token)) return fail_at(token.data(), "not valid JSON (a malformed number)");
  ondemand::number_type type;
  if (auto code = item.get_number_type().get(type)) return fail_at_value(item, code);
  std::uint64_t number = 0;
  if (token.front() == '-' || type == ondemand::number_type::floating_point_number ||
      item.get_uint64().get(number))
    return wrong_type(item, "metric");
  if (number > 0xffffffffu)
    return fail(where() + ": metric " + std::to_string(number) + " is out of range");
  *metric = static_cast<std::uint32_t>(number);
  return true;
}

bool SnapshotWalker::read_nexthops(ondemand::value& item) {
  if (!deeper()) return false;
  ondemand::array hops;
  if (auto code = item.get_array().get(hops)) return fail_at_value(item, code);
  for (auto hop_result : hops) {
    ondemand::value hop;
    if (auto code = std::move(hop_result).get(hop)) return fail_json(code);
    ondemand::json_type type;
    if (auto code = hop.type().get(type)) return fail_at_value(hop, code);
    if (type == ondemand::json_type::string) {
      std::string_view text;
      if (!string_of(hop, text)) return false;
      nexthops_.push_back(text);
      continue;
    }
    if (!deeper()) return false;
    if (type == ondemand::json_type::object)
      return fail(where() + ": 'nexthops' must not be an object");
    if (type == ondemand::json_type::array) return fail(where() + ": unexpected list");
    --nesting_;
    return wrong_type(hop, "nexthops");
  }
  --nesting_;
  return true;
}

}  // namespace fabgate::compare::reading
