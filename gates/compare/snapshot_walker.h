#pragma once

// Private to the snapshot reader (snapshot.cpp): the one walk over a simdjson On-Demand document
// and the builder that fills the route tables from it. Nothing outside gates/compare includes
// this header. Members declared `inline` are defined in snapshot_walker.cpp and called only
// there, so the compiler still inlines them into the walk, per route, as when it was one file.

#include <simdjson.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/compare/route_table.h"
#include "gates/compare/snapshot.h"

namespace fabgate::compare::reading {

namespace ondemand = simdjson::ondemand;
using json = nlohmann::json;

// "byte 42 (line 3, column 7)": byte counts from 1, like the column, so it reads as "the 42nd
// byte"; messages quote the place, never more than a short excerpt of the text.
std::string place(std::string_view text, std::size_t offset);

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

  explicit TableBuilder(bool threaded);
  ~TableBuilder() { finish(); }
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;

  inline List& begin_list(std::string device, std::string family, RouteTable& table);
  // False once the builder has failed: the walk can stop.
  inline bool add(const List& list, std::size_t index, std::string_view vrf,
                  std::string_view prefix, std::string_view protocol,
                  std::optional<std::uint32_t> metric,
                  const std::vector<std::string_view>& nexthops);
  inline bool end_list(const List& list);
  // Waits for the tables; the first failure, if any.
  const std::string& finish();

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

  inline bool flush_if_full();
  inline void push(Batch batch);
  inline void work();
  inline void build(const Batch& batch);
  inline void fail(std::string message);

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

  bool walk();

 private:
  // errors
  inline bool fail(std::string message);
  inline bool fail_at(const char* at, const std::string& what);
  inline bool fail_json(simdjson::error_code code);
  inline bool fail_at_value(ondemand::value& value, simdjson::error_code code);
  inline bool deeper();
  // strings
  inline bool key_of(ondemand::field& field, std::string_view& key);
  inline bool string_of(ondemand::value& value, std::string_view& out);
  // generic tree
  inline bool number_to_json(ondemand::value& value, json& out);
  inline bool to_json(ondemand::value& value, json& out);
  inline bool to_json(simdjson::simdjson_result<ondemand::value> result, json& out);
  template <class Each>
  inline bool walk_object(ondemand::value& value, Each each);
  inline bool is_object(ondemand::value& value, bool* yes);
  inline bool walk_root(ondemand::value& root);
  // route lists
  inline std::string where() const;
  inline bool read_route_list(const std::string& device, const std::string& family,
                              ondemand::value& value);
  inline bool read_route(ondemand::value& value, const TableBuilder::List& target);
  inline bool builder_failed();
  inline bool wrong_type(ondemand::value& item, std::string_view key);
  inline bool read_metric(ondemand::value& item, std::uint32_t* metric);
  inline bool read_nexthops(ondemand::value& item);

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

}  // namespace fabgate::compare::reading
