#include "gates/compare/snapshot.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "adapters/core/text.h"
#include "adapters/core/utf8.h"

namespace fabgate::compare {

using nlohmann::json;
namespace ondemand = simdjson::ondemand;

bool DeviceSnapshot::collects(const std::string& category) const {
  if (sources.count(category)) return true;
  if (category == "routes") return has_routes;
  if (category == "identity") return !identity.empty();
  return facts.contains(category);
}

const SourceInfo* DeviceSnapshot::source(const std::string& category) const {
  auto found = sources.find(category);
  return found == sources.end() ? nullptr : &found->second;
}

namespace {

// "byte 42 (line 3, column 7)": byte counts from 1, like the column, so it reads as "the 42nd
// byte"; messages quote the place, never more than a short excerpt of the text.
std::string place(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line =
      1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  auto line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  std::size_t column = (line_start == std::string_view::npos || line_start >= offset)
                           ? offset + 1
                           : offset - line_start;
  return "byte " + std::to_string(offset + 1) + " (line " + std::to_string(line) + ", column " +
         std::to_string(column) + ")";
}

// simdjson finds broken strings for the whole text at once, without saying where; this finds
// the place again (only on that error path): the first control byte inside a string, or the
// opening quote of a string that never closes.
std::optional<std::size_t> find_string_problem(std::string_view text, bool* unclosed) {
  bool in_string = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else if (c < 0x20) {
        *unclosed = false;
        return i;
      }
    } else if (c == '"') {
      in_string = true;
      start = i;
    }
  }
  *unclosed = true;
  if (in_string) return start;
  return std::nullopt;
}

std::string describe_stage1_error(simdjson::error_code code, std::string_view text) {
  if (code == simdjson::UTF8_ERROR) {
    if (auto problem = find_invalid_utf8(text)) {
      // A short excerpt around the byte, with the bytes that are not UTF-8 written as \xNN.
      // A short excerpt of the line around the byte, with bytes that are not UTF-8 as \xNN.
      std::size_t from = problem->offset >= 12 ? problem->offset - 12 : 0;
      std::string_view excerpt = text.substr(from, problem->offset - from + 8);
      auto line_start = excerpt.rfind('\n', problem->offset - from);
      if (line_start != std::string_view::npos) excerpt.remove_prefix(line_start + 1);
      excerpt = excerpt.substr(0, excerpt.find('\n'));
      return place(text, problem->offset) + ": not UTF-8 (near '" + escape_invalid_utf8(excerpt) +
             "')";
    }
  }
  if (code == simdjson::UNCLOSED_STRING || code == simdjson::UNESCAPED_CHARS) {
    bool unclosed = false;
    if (auto at = find_string_problem(text, &unclosed))
      return place(text, *at) + (unclosed ? ": a string that is never closed"
                                          : ": a control character inside a string (escape it)");
  }
  if (code == simdjson::EMPTY) return "the file holds no JSON (it is empty or only blanks)";
  return std::string("not valid JSON: ") + simdjson::error_message(code);
}

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

// Builds route tables from routes the walk has read, either at once or on a second thread, so
// that reading the text and filling (and sorting) the tables overlap on large files. Routes
// travel in batches of views into the document, which outlives the builder. The first failure
// wins: the builder only sees routes the walk has finished reading, so its failure always lies
// earlier in the text than anything the walk meets afterwards.
class TableBuilder {
 public:
  struct List {  // one route list, for messages
    std::string device, family;
    RouteTable* table;
  };

  explicit TableBuilder(bool threaded) {
    if (threaded) worker_ = std::thread([this] { work(); });
  }
  ~TableBuilder() { finish(); }
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  List& begin_list(std::string device, std::string family, RouteTable& table) {
    lists_.push_back(List{std::move(device), std::move(family), &table});
    return lists_.back();
  }
  // False once the builder has failed: the walk can stop.
  bool add(const List& list, std::size_t index, std::string_view vrf, std::string_view prefix,
           std::string_view protocol, std::optional<std::uint32_t> metric,
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
  bool end_list(const List& list) {
    batch_.items.push_back(Item{&list, 0, true, {}, {}, {}, std::nullopt, 0, 0});
    return flush_if_full();
  }
  // Waits for the tables; the first failure, if any.
  const std::string& finish() {
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

 private:
  struct Item {
    const List* list;
    std::size_t index;
    bool end;
    std::string_view vrf, prefix, protocol;
    std::optional<std::uint32_t> metric;
    std::uint32_t hops_begin, hops_count;
  };
  struct Batch {
    std::vector<Item> items;
    std::vector<std::string_view> hops;
  };
  static constexpr std::size_t kBatchRoutes = 4096;
  static constexpr std::size_t kMaxQueued = 8;  // bounds the memory of routes in flight

  bool flush_if_full() {
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
  void push(Batch batch) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return queue_.size() < kMaxQueued; });
    queue_.push_back(std::move(batch));
    lock.unlock();
    ready_.notify_one();
  }
  void work() {
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
      build(batch);
    }
  }
  void build(const Batch& batch) {
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
        fail("devices." + list.device + ".routes." + list.family + "[" +
             std::to_string(item.index) + "]: " + problem);
    }
  }
  void fail(std::string message) {
    error_ = std::move(message);
    failed_.store(true, std::memory_order_relaxed);
  }

  std::deque<List> lists_;  // stable addresses: items point at them
  Batch batch_;
  std::vector<std::string_view> hops_;
  std::string error_;  // written by the worker; read after join
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<Batch> queue_;
  bool done_ = false;
  std::thread worker_;
};

// Walks a document once, in order, as On-Demand requires: everything except the lists at
// devices.<d>.routes.<family> becomes a JSON tree (small: identity, sources, facts); those lists
// go straight into RouteTables. Every value is read and checked, including ones this version
// ignores, so a malformed document is refused wherever the fault is.
class SnapshotWalker {
 public:
  SnapshotWalker(std::string_view text, ondemand::document& document, TableBuilder& builder)
      : text_(text), document_(document), builder_(builder) {
    // Never reallocated (deeper() stops the walk first), so a key held by reference while the
    // walk goes deeper stays valid.
    keys_.reserve(kMaxSnapshotDepth + 1);
  }

  detail::ParsedDocument parsed;
  std::string error;

  bool walk() {
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

 private:
  // ---- errors ---------------------------------------------------------------------------------
  bool fail(std::string message) {
    error = std::move(message);
    return false;
  }
  bool fail_at(const char* at, const std::string& what) {
    return fail(place(text_, static_cast<std::size_t>(at - text_.data())) + ": " + what);
  }
  // A parse error from simdjson: at the iterator's place when it knows one.
  bool fail_json(simdjson::error_code code) {
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
  bool fail_at_value(ondemand::value& value, simdjson::error_code code) {
    std::string_view token = value.raw_json_token();
    if (!token.empty())
      return fail_at(token.data(), std::string("not valid JSON: ") + simdjson::error_message(code));
    return fail_json(code);
  }

  // The parsers after this one (the tree's consumers, the compare engine) recurse: depth is
  // refused here, as the walk meets it.
  bool deeper() {
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
  bool key_of(ondemand::field& field, std::string_view& key) {
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
  bool string_of(ondemand::value& value, std::string_view& out) {
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
  bool number_to_json(ondemand::value& value, json& out) {
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

  bool to_json(ondemand::value& value, json& out) {
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
  bool to_json(simdjson::simdjson_result<ondemand::value> result, json& out) {
    ondemand::value value;
    if (auto code = std::move(result).get(value)) return fail_json(code);
    return to_json(value, out);
  }

  // Runs `each(key, value)` over an object's fields, keeping the key path for messages.
  template <class Each>
  bool walk_object(ondemand::value& value, Each each) {
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
  bool is_object(ondemand::value& value, bool* yes) {
    ondemand::json_type type;
    if (auto code = value.type().get(type)) return fail_at_value(value, code);
    *yes = type == ondemand::json_type::object;
    return true;
  }

  // root -> devices -> <device> -> routes -> <family>: the only path where route lists live.
  bool walk_root(ondemand::value& root) {
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
  std::string where() const {
    return "devices." + device_ + ".routes." + family_ + "[" + std::to_string(route_index_) + "]";
  }

  bool read_route_list(const std::string& device, const std::string& family,
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
  bool read_route(ondemand::value& value, const TableBuilder::List& target) {
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
  bool builder_failed() { return fail(""); }

  // A value of the wrong type for a known key: still checked as JSON first, so a misspelt
  // literal is called that rather than a wrong type.
  bool wrong_type(ondemand::value& item, std::string_view key) {
    json ignored;
    if (!to_json(item, ignored)) return false;
    return fail(where() + ": '" + std::string(key) + "' has the wrong type");
  }

  // A metric is an unsigned integer up to 2^32-1; negative numbers, fractions and integers
  // beyond 64 bits are the wrong type, as they always were.
  bool read_metric(ondemand::value& item, std::uint32_t* metric) {
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

  bool read_nexthops(ondemand::value& item) {
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

  std::string_view text_;
  ondemand::document& document_;
  std::vector<std::string> keys_;
  std::size_t nesting_ = 0;
  bool in_route_ = false;
  std::string device_, family_;
  std::size_t route_index_ = 0;
  std::vector<std::string_view> nexthops_;
  TableBuilder& builder_;
};

Error invalid(const std::string& file, const std::string& message) {
  return Error::invalid_input("snapshot " + file + ": " + message);
}

Result<DeviceSnapshot> build_device(const std::string& file, const std::string& name, json& tree,
                                    std::map<std::string, RouteTable>* tables) {
  if (!tree.is_object()) return invalid(file, "devices." + name + " must be an object");
  DeviceSnapshot device;
  for (auto& [key, value] : tree.items()) {
    if (key == "identity") {
      if (!value.is_object())
        return invalid(file, "devices." + name + ".identity must be an object");
      device.identity = std::move(value);
    } else if (key == "sources") {
      if (!value.is_object())
        return invalid(file, "devices." + name + ".sources must be an object");
      for (auto& [category, source] : value.items()) {
        std::string at = "devices." + name + ".sources." + category;
        if (!source.is_object() || !source.contains("status") || !source["status"].is_string())
          return invalid(file, at + " needs a 'status' of ok or no-evidence");
        std::string status = source["status"].get<std::string>();
        SourceInfo info;
        if (status == "no-evidence") {
          info.ok = false;
          info.reason = source.value("reason", std::string("no reason given"));
        } else if (status != "ok") {
          return invalid(file, at + ".status is '" + status + "', not ok or no-evidence");
        }
        device.sources.emplace(category, std::move(info));
      }
    } else if (key == "routes") {
      if (!value.is_object()) return invalid(file, "devices." + name + ".routes must be an object");
      for (auto& [family, list] : value.items())
        return invalid(file, "devices." + name + ".routes." + family + " must be a list of routes");
      device.has_routes = true;
      if (tables) device.routes = std::move(*tables);
    } else {
      device.facts[key] = std::move(value);
    }
  }
  return device;
}

// Parses `text`, which has simdjson's padding after it, with `parser` (one per thread).
// Documents from this size on build their tables on a second thread (a 130 MB, 1.2 M route file
// loads in about 0.6 of the time); smaller ones are not worth a thread.
constexpr std::size_t kThreadedBuildBytes = 4u << 20;

Result<Snapshot> parse_padded(ondemand::parser& parser, simdjson::padded_string_view text,
                              const std::string& file_name, std::size_t threaded_from) {
  ondemand::document document;
  if (auto code = parser.iterate(text).get(document))
    return invalid(file_name, describe_stage1_error(code, text));
  TableBuilder builder(text.size() >= threaded_from);
  SnapshotWalker walker(text, document, builder);
  bool walked = false;
  try {
    walked = walker.walk();
  } catch (const std::exception& e) {  // out of memory while building the tree
    builder.finish();
    return invalid(file_name, std::string("cannot be read: ") + e.what());
  }
  const std::string& build_error = builder.finish();  // before the document goes away
  if (!build_error.empty()) return invalid(file_name, build_error);
  if (!walked) return invalid(file_name, walker.error);
  return detail::assemble_snapshot(walker.parsed, file_name);
}

// Reads a regular file of at most kMaxSnapshotBytes into a padded buffer.
// `buffer` is reused when it is large enough (the pair loader reads two files into one buffer,
// saving the second file's page faults); the view returned holds the file and zeroed padding.
Result<simdjson::padded_string_view> read_padded(const std::string& path,
                                                 simdjson::padded_string& buffer) {
  // Opened first and judged by the open file, so what is checked is what is read. A folder
  // opens for reading and "seeks" to a huge end: it must be refused before any buffer is sized.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Error::invalid_input("snapshot " + path + ": cannot be read: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": cannot be read: " + why);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": not a regular file (" +
                                (S_ISDIR(info.st_mode) ? "a directory" : "a special file") +
                                "); give the path of a snapshot JSON file");
  }
  auto size = static_cast<std::uintmax_t>(info.st_size);
  if (size > kMaxSnapshotBytes) {
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": " + std::to_string(size) +
                                " bytes, more than the " + std::to_string(kMaxSnapshotBytes >> 20) +
                                " MiB a snapshot may have");
  }
  if (buffer.data() == nullptr || buffer.size() < size)
    buffer = simdjson::padded_string(static_cast<std::size_t>(size));
  if (buffer.data() == nullptr) {
    ::close(fd);
    return Error::invalid_input("snapshot " + path + ": no memory for " + std::to_string(size) +
                                " bytes");
  }
  std::size_t got = 0;
  std::string_view text(buffer.data(), static_cast<std::size_t>(size));
  std::string why = "the file shrank while it was read";
  while (got < text.size()) {
    ssize_t n = ::read(fd, buffer.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = std::strerror(errno);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != text.size())
    return Error::invalid_input("snapshot " + path + ": read failed after " + std::to_string(got) +
                                " of " + std::to_string(text.size()) + " bytes: " + why);
  std::memset(buffer.data() + text.size(), 0, simdjson::SIMDJSON_PADDING);
  return simdjson::padded_string_view(buffer.data(), text.size(),
                                      text.size() + simdjson::SIMDJSON_PADDING);
}

}  // namespace

namespace detail {

Result<Snapshot> assemble_snapshot(ParsedDocument& parsed, const std::string& file_name) {
  json& root = parsed.root;
  if (!root.is_object()) return invalid(file_name, "the document must be a JSON object");
  if (!root.contains("format") || root["format"] != kSnapshotFormat)
    return invalid(file_name, "'format' must be \"" + std::string(kSnapshotFormat) + "\"");
  Snapshot snapshot;
  snapshot.file = file_name;
  if (!root.contains("taken_at") || !root["taken_at"].is_string())
    return invalid(file_name, "'taken_at' (ISO 8601 time) is missing");
  auto taken_at = parse_iso8601(root["taken_at"].get<std::string>());
  if (!taken_at)
    return invalid(file_name, "'taken_at' is not an ISO 8601 time with a zone: " +
                                  root["taken_at"].get<std::string>());
  snapshot.taken_at = *taken_at;
  if (root.contains("intent_commit") && root["intent_commit"].is_string())
    snapshot.intent_commit = root["intent_commit"].get<std::string>();
  if (!root.contains("devices") || !root["devices"].is_object())
    return invalid(file_name, "'devices' must be an object");

  for (auto& [name, tree] : root["devices"].items()) {
    auto tables = parsed.route_tables.find(name);
    auto device = build_device(file_name, name, tree,
                               tables == parsed.route_tables.end() ? nullptr : &tables->second);
    if (!device) return device.error();
    snapshot.devices.emplace(name, std::move(device).value());
  }
  for (auto& [name, tables] : parsed.route_tables)
    if (!snapshot.devices.count(name))
      return invalid(file_name, "routes for unknown device " + name);
  return snapshot;
}

}  // namespace detail

Result<Snapshot> parse_snapshot(std::string_view text, const std::string& file_name) {
  simdjson::padded_string padded(text);
  if (padded.data() == nullptr && !text.empty())
    return invalid(file_name, "no memory for " + std::to_string(text.size()) + " bytes");
  ondemand::parser parser;
  return parse_padded(parser, padded, file_name, kThreadedBuildBytes);
}

namespace detail {
Result<Snapshot> parse_snapshot_threaded_from(std::string_view text, const std::string& file_name,
                                              std::size_t threaded_from) {
  simdjson::padded_string padded(text);
  if (padded.data() == nullptr && !text.empty())
    return invalid(file_name, "no memory for " + std::to_string(text.size()) + " bytes");
  ondemand::parser parser;
  return parse_padded(parser, padded, file_name, threaded_from);
}
}  // namespace detail

Result<Snapshot> load_snapshot_file(const std::string& path) {
  simdjson::padded_string buffer;
  auto text = read_padded(path, buffer);
  if (!text) return text.error();
  ondemand::parser parser;
  return parse_padded(parser, *text, path, kThreadedBuildBytes);
}

Result<SnapshotPair> load_snapshot_pair(const std::string& pre_path, const std::string& post_path) {
  // One buffer and one parser, sized for the larger file, serve both.
  std::error_code ignored;
  auto pre_size = std::filesystem::file_size(pre_path, ignored);
  auto post_size = std::filesystem::file_size(post_path, ignored);
  std::uintmax_t larger = std::max(pre_size == std::uintmax_t(-1) ? 0 : pre_size,
                                   post_size == std::uintmax_t(-1) ? 0 : post_size);
  simdjson::padded_string buffer;
  if (larger > 0 && larger <= kMaxSnapshotBytes)
    buffer = simdjson::padded_string(static_cast<std::size_t>(larger));
  ondemand::parser parser;
  auto pre_text = read_padded(pre_path, buffer);
  if (!pre_text) return pre_text.error();
  auto pre = parse_padded(parser, *pre_text, pre_path, kThreadedBuildBytes);
  if (!pre) return pre.error();
  auto post_text = read_padded(post_path, buffer);
  if (!post_text) return post_text.error();
  auto post = parse_padded(parser, *post_text, post_path, kThreadedBuildBytes);
  if (!post) return post.error();
  return SnapshotPair{std::move(pre).value(), std::move(post).value()};
}

}  // namespace fabgate::compare
