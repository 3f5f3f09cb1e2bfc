#include "gates/compare/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "adapters/core/text.h"

namespace fabgate::compare {

using nlohmann::json;

namespace {

// A concrete element found by walking a rule's pattern over both snapshots of one device.
struct Element {
  std::vector<std::string> relative;  // segments after devices.<device>
  const json* pre = nullptr;
  const json* post = nullptr;
};

std::optional<long double> numeric(const json* value) {
  if (!value) return std::nullopt;
  if (value->is_number_unsigned()) return static_cast<long double>(value->get<std::uint64_t>());
  if (value->is_number_integer()) return static_cast<long double>(value->get<std::int64_t>());
  if (value->is_number_float()) return static_cast<long double>(value->get<double>());
  return std::nullopt;
}

std::optional<long double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  long double value = std::strtold(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// Rule arguments are YAML scalars (text); snapshot values are typed JSON. A number matches a
// number of equal value, a string matches its exact text, a boolean matches true/false.
bool scalar_matches(const json& post, const std::string& expected) {
  if (post.is_string()) return post.get<std::string>() == expected;
  if (post.is_boolean()) return expected == (post.get<bool>() ? "true" : "false");
  if (post.is_null()) return expected == "null" || expected == "~";
  if (post.is_number()) {
    auto want = parse_number(expected);
    return want && *numeric(&post) == *want;
  }
  return post.dump() == expected;
}

std::string number_text(long double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e18)
    return std::to_string(static_cast<long long>(value));
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6Lg", value);
  return buffer;
}

std::optional<std::string> text_of(const json* value) {
  if (!value) return std::nullopt;
  return value->dump();
}

class Engine {
 public:
  Engine(const Snapshot& pre, const Snapshot& post, const std::vector<RuleSet>& rule_sets,
         const std::vector<intent::ExpectedDifference>& expected,
         const ExceptionRegister& exceptions, const CompareOptions& options)
      : pre_(pre), post_(post), rule_sets_(rule_sets), exceptions_(exceptions), options_(options) {
    for (const auto& set : rule_sets)
      for (const auto& pattern : set.ignore) {
        ignores_.push_back({&pattern, report_.ignored.size()});
        report_.ignored.push_back({pattern.text(), set.name, 0});
      }
    for (const auto& difference : expected) {
      // `path: spread` declares a device's load spread for the spread gates
      // (gates/pipeline/families/spread_gates.cpp); it names no snapshot element.
      if (difference.path == "spread") continue;
      Expectation expectation{&difference, std::nullopt, {}, false};
      std::string problem;
      expectation.path = PathPattern::parse(difference.path, &problem);
      expectation.problem = problem;
      expectations_.push_back(std::move(expectation));
    }
    for (const auto& entry : exceptions.entries)
      if (entry.expired(options.now))
        report_.expired_exceptions.push_back(
            {entry.id, entry.owner, entry.reason, entry.expiry, entry.where, 0});
    pre_stale_ = stale_reason("pre", pre);
    post_stale_ = stale_reason("post", post);
    if (options.stale == StaleSnapshots::stated_once) {
      for (const auto* side : {&pre, &post}) {
        if (options.max_age.count() <= 0 || options.now - side->taken_at <= options.max_age)
          continue;
        report_.stale.push_back(
            {side == &pre ? "pre" : "post", side->taken_at,
             std::chrono::duration_cast<Duration>(options.now - side->taken_at)});
      }
      report_.max_age = options.max_age;
      pre_stale_.clear();
      post_stale_.clear();
    }
  }

  Report run() {
    report_.pre_file = pre_.file;
    report_.post_file = post_.file;
    report_.pre_taken_at = pre_.taken_at;
    report_.post_taken_at = post_.taken_at;
    for (const auto& set : rule_sets_)
      for (const auto& rule : set.rules) check_rule(rule);
    report_unmatched_expectations();
    report_.recount();
    return std::move(report_);
  }

 private:
  struct Ignore {
    const PathPattern* pattern;
    std::size_t counter;  // index into report_.ignored
  };
  struct Expectation {
    const intent::ExpectedDifference* source;
    std::optional<PathPattern> path;
    std::string problem;
    bool matched;
  };

  // ---- evidence that holds for a whole device --------------------------------------------------

  std::string stale_reason(const char* side, const Snapshot& snapshot) const {
    if (options_.max_age.count() <= 0) return {};
    if (options_.now - snapshot.taken_at <= options_.max_age) return {};
    return std::string(side) + " snapshot taken at " + format_utc(snapshot.taken_at) +
           " is older than max age " + format_duration(options_.max_age);
  }

  static std::string identity_change(const DeviceSnapshot& pre, const DeviceSnapshot& post) {
    for (const char* field : {"hostname", "serial", "platform"}) {
      const json* a = pre.identity.contains(field) ? &pre.identity[field] : nullptr;
      const json* b = post.identity.contains(field) ? &post.identity[field] : nullptr;
      if (!a && !b) continue;
      if (!a || !b || *a != *b)
        return std::string("device identity changed: ") + field + " " +
               (a ? a->dump() : "(missing)") + " -> " + (b ? b->dump() : "(missing)");
    }
    return {};
  }

  // Why nothing this device says about `category` can be trusted; empty when it can.
  std::string device_problem(const std::string& device, const DeviceSnapshot* pre,
                             const DeviceSnapshot* post, const std::string& category) const {
    if (!pre_stale_.empty()) return pre_stale_;
    if (!post_stale_.empty()) return post_stale_;
    if (!pre) return "device " + device + " is not in the pre snapshot";
    if (!post) return "device " + device + " is not in the post snapshot";
    if (auto change = identity_change(*pre, *post); !change.empty()) return change;
    if (auto* source = pre->source(category); source && !source->ok)
      return "pre: source " + category + " has no evidence: " + source->reason;
    if (auto* source = post->source(category); source && !source->ok)
      return "post: source " + category + " has no evidence: " + source->reason;
    return {};
  }

  // ---- walking patterns -----------------------------------------------------------------------

  static const json* child(const json* node, const std::string& key) {
    if (!node) return nullptr;
    if (node->is_object()) {
      auto found = node->find(key);
      return found == node->end() ? nullptr : &*found;
    }
    if (node->is_array()) {
      if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos) return nullptr;
      auto index = std::strtoull(key.c_str(), nullptr, 10);
      return index < node->size() ? &(*node)[index] : nullptr;
    }
    return nullptr;
  }

  // Keys of a container: sorted map keys or list indices.
  static void keys_of(const json* node, std::set<std::string>& keys, std::size_t& list_size) {
    if (!node) return;
    if (node->is_object())
      for (const auto& item : node->items()) keys.insert(item.key());
    else if (node->is_array())
      list_size = std::max(list_size, node->size());
  }

  void walk(const std::vector<PathSegment>& segments, std::size_t index, const json* pre,
            const json* post, std::vector<std::string>& relative, std::vector<Element>& out) {
    if (index == segments.size()) {
      out.push_back({relative, pre, post});
      return;
    }
    const PathSegment& segment = segments[index];
    if (!segment.glob) {
      relative.push_back(segment.text);
      walk(segments, index + 1, child(pre, segment.text), child(post, segment.text), relative, out);
      relative.pop_back();
      return;
    }
    std::set<std::string> keys;
    std::size_t list_size = 0;
    keys_of(pre, keys, list_size);
    keys_of(post, keys, list_size);
    for (std::size_t i = 0; i < list_size; ++i) {
      std::string key = std::to_string(i);
      if (!segment.matches(key)) continue;
      relative.push_back(key);
      walk(segments, index + 1, child(pre, key), child(post, key), relative, out);
      relative.pop_back();
    }
    for (const auto& key : keys) {
      if (!segment.matches(key)) continue;
      relative.push_back(key);
      walk(segments, index + 1, child(pre, key), child(post, key), relative, out);
      relative.pop_back();
    }
  }

  static std::vector<std::string> full_path(const std::string& device,
                                            const std::vector<std::string>& relative) {
    std::vector<std::string> path{"devices", device};
    path.insert(path.end(), relative.begin(), relative.end());
    return path;
  }

  // A volatile field is left out when the rule reached it through a wildcard; a rule that
  // names it literally addresses it on purpose.
  bool ignored(const Rule& rule, const std::vector<std::string>& path) {
    for (const auto& ignore : ignores_) {
      std::size_t length = ignore.pattern->size();
      if (!ignore.pattern->matches_prefix_of(path)) continue;
      if (length > rule.path.size()) continue;
      if (rule.path.segments()[length - 1].glob) {
        ++report_.ignored[ignore.counter].elements;
        return true;
      }
    }
    return false;
  }

  // Copies a container value without the volatile fields below it, so no-change on a whole
  // interface does not fail on its packet counters.
  void strip_ignored(json& value, std::vector<std::string>& path) {
    if (!value.is_object() && !value.is_array()) return;
    if (value.is_object()) {
      for (auto it = value.begin(); it != value.end();) {
        path.push_back(it.key());
        bool drop = false;
        for (const auto& ignore : ignores_)
          if (ignore.pattern->matches(path)) {
            ++report_.ignored[ignore.counter].elements;
            drop = true;
            break;
          }
        if (drop) {
          it = value.erase(it);
        } else {
          strip_ignored(*it, path);
          ++it;
        }
        path.pop_back();
      }
    } else {
      for (std::size_t i = 0; i < value.size(); ++i) {
        path.push_back(std::to_string(i));
        strip_ignored(value[i], path);
        path.pop_back();
      }
    }
  }

  bool any_ignore_below(const std::vector<std::string>& path) const {
    for (const auto& ignore : ignores_) {
      if (ignore.pattern->size() <= path.size()) continue;
      bool prefix = true;
      for (std::size_t i = 0; i < path.size() && prefix; ++i)
        prefix = ignore.pattern->segments()[i].matches(path[i]);
      if (prefix) return true;
    }
    return false;
  }

  // ---- rules ----------------------------------------------------------------------------------

  void check_rule(const Rule& rule) {
    const PathSegment& device_segment = rule.path.segments()[1];
    std::set<std::string> devices;
    for (const auto& [name, device] : pre_.devices) devices.insert(name);
    for (const auto& [name, device] : post_.devices) devices.insert(name);
    if (!device_segment.glob && !devices.count(device_segment.text)) {
      emit_device_level(rule, device_segment.text,
                        "device " + device_segment.text + " is in neither snapshot", {}, {});
      return;
    }
    for (const auto& name : devices) {
      if (!device_segment.matches(name)) continue;
      const DeviceSnapshot* pre = find(pre_, name);
      const DeviceSnapshot* post = find(post_, name);
      bool collected =
          (pre && pre->collects(rule.category())) || (post && post->collects(rule.category()));
      if (!collected) {
        // A host without BGP is not a failed BGP check; a rule naming this device is.
        if (!device_segment.glob)
          emit_device_level(rule, name,
                            "category " + rule.category() + " is not collected on " + name, {}, {});
        continue;
      }
      std::string problem = device_problem(name, pre, post, rule.category());
      if (rule.category() == "routes")
        check_routes(rule, name, pre, post, problem);
      else
        check_facts(rule, name, pre, post, problem);
    }
  }

  static const DeviceSnapshot* find(const Snapshot& snapshot, const std::string& name) {
    auto found = snapshot.devices.find(name);
    return found == snapshot.devices.end() ? nullptr : &found->second;
  }

  std::string device_pattern_path(const Rule& rule, const std::string& device) const {
    return "devices." + quote_segment(device) + "." + rule.path.suffix(2).text();
  }

  void emit_device_level(const Rule& rule, const std::string& device, const std::string& reason,
                         std::optional<std::string> pre, std::optional<std::string> post) {
    CheckResult result = base(rule, device);
    result.path = device_pattern_path(rule, device);
    result.pre = std::move(pre);
    result.post = std::move(post);
    result.verdict = Verdict::no_evidence;
    result.reason = reason;
    std::vector<std::string> relative;
    for (std::size_t i = 2; i < rule.path.size(); ++i)
      relative.push_back(rule.path.segments()[i].text);
    emit(std::move(result), relative);
  }

  CheckResult base(const Rule& rule, const std::string& device) const {
    CheckResult result;
    result.rule = rule.name;
    result.rule_set = rule.rule_set;
    result.layer = rule.layer;
    result.device = device;
    return result;
  }

  // Identity is kept apart from the facts but compares like a category (versions must hold).
  static const json* category_root(const DeviceSnapshot& device, const std::string& category) {
    if (category == "identity") return &device.identity;
    return child(&device.facts, category);
  }

  void check_facts(const Rule& rule, const std::string& device, const DeviceSnapshot* pre,
                   const DeviceSnapshot* post, const std::string& problem) {
    const std::string& category = rule.category();
    const json* pre_root = pre ? category_root(*pre, category) : nullptr;
    const json* post_root = post ? category_root(*post, category) : nullptr;
    std::vector<Element> elements;
    std::vector<std::string> relative{category};
    walk(rule.path.segments(), 3, pre_root, post_root, relative, elements);

    // An element absent on both sides under a wildcard is a field this device does not have
    // (a switch has no gpu_driver): the rule does not apply to it. A rule that names device and
    // element literally asked for it, so there it stays and becomes no-evidence.
    bool literal = !rule.path.segments()[1].glob;
    for (std::size_t i = 3; i < rule.path.size(); ++i)
      literal = literal && !rule.path.segments()[i].glob;
    std::vector<Element> kept;
    for (auto& element : elements) {
      if (!element.pre && !element.post && !literal) continue;
      if (!ignored(rule, full_path(device, element.relative))) kept.push_back(std::move(element));
    }

    if (rule.op == Operator::count) {
      count_check(rule, device, kept, problem);
      return;
    }
    if (kept.empty()) {
      if (!problem.empty()) {
        emit_device_level(rule, device, problem, {}, {});
      } else if (rule.op == Operator::exists) {
        CheckResult result = base(rule, device);
        result.path = device_pattern_path(rule, device);
        result.verdict = Verdict::fail;
        result.reason = "nothing matches in the post snapshot";
        emit(std::move(result), {});
      }
      return;
    }
    for (const auto& element : kept) check_element(rule, device, element, problem);
  }

  void count_check(const Rule& rule, const std::string& device, const std::vector<Element>& kept,
                   const std::string& problem) {
    std::size_t pre_count = 0, post_count = 0;
    for (const auto& element : kept) {
      pre_count += element.pre != nullptr;
      post_count += element.post != nullptr;
    }
    CheckResult result = base(rule, device);
    result.path = device_pattern_path(rule, device);
    result.pre = std::to_string(pre_count);
    result.post = std::to_string(post_count);
    verdict_for_count(rule, post_count, problem, result);
    emit(std::move(result), {});
  }

  void verdict_for_count(const Rule& rule, std::size_t post_count, const std::string& problem,
                         CheckResult& result) {
    std::string condition =
        "count " + std::string(to_string(rule.comparison)) + " " + std::to_string(rule.count);
    if (!problem.empty()) {
      result.verdict = Verdict::no_evidence;
      result.reason = problem;
    } else if (holds(rule.comparison, static_cast<long double>(post_count),
                     static_cast<long double>(rule.count))) {
      result.verdict = Verdict::pass;
      result.reason = std::to_string(post_count) + " elements; " + condition + " holds";
    } else {
      result.verdict = Verdict::fail;
      result.reason = std::to_string(post_count) + " elements; expected " + condition;
    }
  }

  const Expectation* expectation_for(const std::string& device,
                                     const std::vector<std::string>& relative) {
    for (auto& expectation : expectations_) {
      if (!expectation.path) continue;
      const std::string& wanted = expectation.source->device;
      if (wanted != "*" && !glob_match(wanted, device)) continue;
      if (!expectation.path->matches_prefix_of(relative)) continue;
      expectation.matched = true;
      return &expectation;
    }
    return nullptr;
  }

  // The element's value in options_.counters_since, for an `increase` rule; null otherwise.
  const json* counter_reference(const Rule& rule, const std::string& device,
                                const std::vector<std::string>& relative) const {
    if (rule.op != Operator::increase || !options_.counters_since || relative.empty())
      return nullptr;
    auto found = options_.counters_since->devices.find(device);
    if (found == options_.counters_since->devices.end()) return nullptr;
    const json* node = category_root(found->second, relative.front());
    for (std::size_t i = 1; node && i < relative.size(); ++i) node = child(node, relative[i]);
    return node;
  }

  void check_element(const Rule& rule, const std::string& device, const Element& element,
                     const std::string& problem) {
    CheckResult result = base(rule, device);
    auto path = full_path(device, element.relative);
    result.path = format_path(path);

    // Compare containers without their volatile fields.
    std::optional<json> pre_copy, post_copy;
    const json* pre = element.pre;
    const json* post = element.post;
    if (any_ignore_below(path)) {
      if (pre && pre->is_structured()) {
        pre_copy = *pre;
        auto scratch = path;
        strip_ignored(*pre_copy, scratch);
        pre = &*pre_copy;
      }
      if (post && post->is_structured()) {
        post_copy = *post;
        auto scratch = path;
        strip_ignored(*post_copy, scratch);
        post = &*post_copy;
      }
    }
    result.pre = text_of(pre);
    result.post = text_of(post);

    // A declared difference is the change's statement of what the element becomes, so it
    // replaces every rule on that element, not only no-change (a drained spine's
    // prefixes_received drops to 0 however a delta rule bounds it).
    const Expectation* expectation = expectation_for(device, element.relative);
    if (!problem.empty()) {
      result.verdict = Verdict::no_evidence;
      result.reason = problem;
    } else if (expectation) {
      result.expected_difference = true;
      judge_expected(*expectation->source, pre, post, result);
    } else if (const json* since = counter_reference(rule, device, element.relative)) {
      result.pre = text_of(since);
      judge(rule, since, post, result);
      result.reason += " since " + options_.counters_since_what + " (" +
                       options_.counters_since->file + "): a counter never returns to its baseline";
    } else {
      judge(rule, pre, post, result);
    }
    emit(std::move(result), element.relative);
  }

  static void set(CheckResult& result, Verdict verdict, std::string reason) {
    result.verdict = verdict;
    result.reason = std::move(reason);
  }

  static void judge_expected(const intent::ExpectedDifference& expected, const json* pre,
                             const json* post, CheckResult& result) {
    std::string declared = "expected difference (" + expected.where.to_string() + ")";
    if (expected.where.file.empty()) declared = "expected difference";
    if (expected.absent) {
      if (!post)
        set(result, Verdict::pass, "absent after the change, as the " + declared + " says");
      else
        set(result, Verdict::fail, "still present; the " + declared + " says it goes away");
      return;
    }
    if (!post) {
      set(result, Verdict::no_evidence, "missing in the post snapshot");
      return;
    }
    if (expected.values.empty()) {
      set(result, Verdict::pass,
          std::string(pre && *pre == *post ? "unchanged" : "changed") +
              "; any value allowed by the " + declared);
      return;
    }
    for (const auto& value : expected.values)
      if (scalar_matches(*post, value)) {
        set(result, Verdict::pass, "post value is allowed by the " + declared);
        return;
      }
    set(result, Verdict::fail,
        "post value " + post->dump() + " is not among the values the " + declared +
            " allows: " + join(expected.values, ", "));
  }

  static void judge(const Rule& rule, const json* pre, const json* post, CheckResult& result) {
    bool needs_pre = rule.op == Operator::no_change || rule.op == Operator::delta ||
                     rule.op == Operator::increase;
    bool presence_only = rule.op == Operator::exists || rule.op == Operator::absent;
    if (!presence_only) {
      if (needs_pre && !pre && !post)
        return set(result, Verdict::no_evidence, "missing in the pre and post snapshots");
      if (needs_pre && !pre)
        return set(result, Verdict::no_evidence, "missing in the pre snapshot");
      if (!post) return set(result, Verdict::no_evidence, "missing in the post snapshot");
    }
    switch (rule.op) {
      case Operator::no_change:
        if (*pre == *post) return set(result, Verdict::pass, "unchanged");
        return set(result, Verdict::fail, "changed from " + pre->dump() + " to " + post->dump());
      case Operator::equal:
        if (scalar_matches(*post, rule.value))
          return set(result, Verdict::pass, "equals " + rule.value);
        return set(result, Verdict::fail, "expected " + rule.value + ", found " + post->dump());
      case Operator::in:
        for (const auto& value : rule.values)
          if (scalar_matches(*post, value))
            return set(result, Verdict::pass, "is one of " + join(rule.values, ", "));
        return set(result, Verdict::fail,
                   post->dump() + " is not one of " + join(rule.values, ", "));
      case Operator::range: {
        auto number = numeric(post);
        if (!number) return set(result, Verdict::fail, post->dump() + " is not a number");
        std::string bounds = "[" + (rule.min ? number_text(*rule.min) : std::string("-inf")) +
                             ", " + (rule.max ? number_text(*rule.max) : std::string("inf")) + "]";
        if ((rule.min && *number < *rule.min) || (rule.max && *number > *rule.max))
          return set(result, Verdict::fail, number_text(*number) + " is outside " + bounds);
        return set(result, Verdict::pass, number_text(*number) + " is within " + bounds);
      }
      case Operator::delta: {
        auto a = numeric(pre), b = numeric(post);
        if (!a || !b)
          return set(result, Verdict::fail,
                     "delta needs numbers, found " + pre->dump() + " and " + post->dump());
        long double change = std::fabs(*b - *a);
        long double limit = rule.percent ? std::fabs(*a) * *rule.max / 100.0L : *rule.max;
        std::string limit_text = number_text(*rule.max) + (rule.percent ? "%" : "");
        std::string moved = "changed by " + number_text(*b - *a);
        if (rule.percent && *a != 0)
          moved += " (" + number_text(std::round((*b - *a) / std::fabs(*a) * 1000) / 10) + "%)";
        if (change <= limit) return set(result, Verdict::pass, moved + ", within " + limit_text);
        return set(result, Verdict::fail, moved + ", more than " + limit_text);
      }
      case Operator::increase: {
        auto a = numeric(pre), b = numeric(post);
        if (!a || !b)
          return set(result, Verdict::fail,
                     "increase needs counters, found " + pre->dump() + " and " + post->dump());
        long double growth = *b - *a;
        std::string bounds = "[" + number_text(*rule.min) + ", " + number_text(*rule.max) + "]";
        if (growth < 0 && *rule.min >= 0)
          return set(result, Verdict::fail,
                     "counter went backwards by " + number_text(-growth) + " (reset or replaced?)");
        if (growth < *rule.min || growth > *rule.max)
          return set(result, Verdict::fail,
                     "grew by " + number_text(growth) + ", outside " + bounds);
        return set(result, Verdict::pass, "grew by " + number_text(growth) + ", within " + bounds);
      }
      case Operator::exists:
        if (post) return set(result, Verdict::pass, "present in the post snapshot");
        return set(result, Verdict::fail, "missing in the post snapshot");
      case Operator::absent:
        if (!post) return set(result, Verdict::pass, "absent in the post snapshot");
        return set(result, Verdict::fail, "present in the post snapshot");
      case Operator::count:
        break;  // handled per device
    }
  }

  // ---- route tables ---------------------------------------------------------------------------

  void check_routes(const Rule& rule, const std::string& device, const DeviceSnapshot* pre,
                    const DeviceSnapshot* post, const std::string& problem) {
    const PathSegment& family_segment = rule.path.segments()[3];
    std::set<std::string> families;
    for (const char* family : {"ipv4", "ipv6"}) {
      if (!family_segment.matches(family)) continue;
      bool present = (pre && pre->routes.count(family)) || (post && post->routes.count(family));
      if (present || !family_segment.glob) families.insert(family);
    }
    if (families.empty() && !problem.empty()) {
      emit_device_level(rule, device, problem, {}, {});
      return;
    }
    for (const auto& family : families) {
      const RouteTable* a = nullptr;
      const RouteTable* b = nullptr;
      if (pre)
        if (auto found = pre->routes.find(family); found != pre->routes.end()) a = &found->second;
      if (post)
        if (auto found = post->routes.find(family); found != post->routes.end()) b = &found->second;
      std::vector<std::string> relative{"routes", family};
      CheckResult result = base(rule, device);
      result.path = format_path(full_path(device, relative));
      if (a) result.pre = std::to_string(a->size()) + " routes";
      if (b) result.post = std::to_string(b->size()) + " routes";
      judge_routes(rule, device, relative, a, b, problem, result);
      emit(std::move(result), relative);
    }
  }

  void judge_routes(const Rule& rule, const std::string& device,
                    const std::vector<std::string>& relative, const RouteTable* pre,
                    const RouteTable* post, const std::string& problem, CheckResult& result) {
    if (!problem.empty()) return set(result, Verdict::no_evidence, problem);
    switch (rule.op) {
      case Operator::exists:
        if (post) return set(result, Verdict::pass, "route table present in the post snapshot");
        return set(result, Verdict::fail, "route table missing in the post snapshot");
      case Operator::absent:
        if (!post) return set(result, Verdict::pass, "route table absent in the post snapshot");
        return set(result, Verdict::fail, "route table present in the post snapshot");
      case Operator::count:
        if (pre) result.pre = std::to_string(pre->size());
        if (!post)
          return set(result, Verdict::no_evidence, "route table missing in the post snapshot");
        result.post = std::to_string(post->size());
        return verdict_for_count(rule, post->size(), problem, result);
      default:
        break;
    }
    // no-change, possibly replaced by an expected difference.
    const Expectation* expectation = expectation_for(device, relative);
    result.expected_difference = expectation != nullptr;
    if (expectation && expectation->source->absent) {
      if (!post) return set(result, Verdict::pass, "route table absent, as the change expects");
      return set(result, Verdict::fail, "route table still present; the change expects it gone");
    }
    if (!pre) return set(result, Verdict::no_evidence, "route table missing in the pre snapshot");
    if (!post) return set(result, Verdict::no_evidence, "route table missing in the post snapshot");
    RouteDiff diff = diff_routes(*pre, *post, options_.route_examples);
    result.route_counts = CheckResult::RouteCounts{diff.added, diff.removed, diff.changed};
    std::string counts = std::to_string(diff.added) + " added, " + std::to_string(diff.removed) +
                         " removed, " + std::to_string(diff.changed) + " changed";
    for (const auto& text : diff.removed_examples) result.details.push_back("- " + text);
    for (const auto& text : diff.added_examples) result.details.push_back("+ " + text);
    for (const auto& text : diff.changed_examples) result.details.push_back("~ " + text);
    if (diff.empty()) return set(result, Verdict::pass, "unchanged");
    if (expectation)
      return set(result, Verdict::pass, counts + "; allowed by the change's expected difference");
    set(result, Verdict::fail, counts);
  }

  // ---- results and exceptions -----------------------------------------------------------------

  void emit(CheckResult result, const std::vector<std::string>& relative) {
    if (result.verdict == Verdict::fail || result.verdict == Verdict::no_evidence) {
      for (const auto& entry : exceptions_.entries) {
        if (!entry.covers(result.device, result.rule, relative)) continue;
        if (entry.expired(options_.now)) {
          for (auto& expired : report_.expired_exceptions)
            if (expired.id == entry.id) ++expired.would_match;
          result.reason += " (exception " + entry.id + " expired " + format_utc(entry.expiry) + ")";
          continue;
        }
        result.waived_verdict = result.verdict;
        result.verdict = Verdict::waived;
        result.exception_id = entry.id;
        if (std::find(report_.exceptions_used.begin(), report_.exceptions_used.end(), entry.id) ==
            report_.exceptions_used.end())
          report_.exceptions_used.push_back(entry.id);
        break;
      }
    }
    report_.results.push_back(std::move(result));
  }

  // A declared difference that no rule reached is either a typo in the change or an
  // element nobody checks; both deserve a person's eyes, so it is no-evidence, not silence.
  void report_unmatched_expectations() {
    for (const auto& expectation : expectations_) {
      if (expectation.matched) continue;
      const auto& source = *expectation.source;
      CheckResult result;
      result.rule = "expected-difference";
      result.rule_set = "change";
      std::string category = expectation.path ? expectation.path->segments()[0].text : "";
      result.layer = layer_of_category(category);
      result.device = source.device;
      result.path = "devices." +
                    (source.device == "*" ? std::string("*") : quote_segment(source.device)) + "." +
                    source.path;
      result.verdict = Verdict::no_evidence;
      result.reason = expectation.path
                          ? "the expected difference matched no element any rule checks"
                          : "the expected difference has an invalid path: " + expectation.problem;
      std::vector<std::string> relative;
      if (expectation.path)
        for (const auto& segment : expectation.path->segments()) relative.push_back(segment.text);
      emit(std::move(result), relative);
    }
  }

  const Snapshot& pre_;
  const Snapshot& post_;
  const std::vector<RuleSet>& rule_sets_;
  const ExceptionRegister& exceptions_;
  CompareOptions options_;
  std::vector<Ignore> ignores_;
  std::vector<Expectation> expectations_;
  std::string pre_stale_, post_stale_;
  Report report_;
};

}  // namespace

Report compare_snapshots(const Snapshot& pre, const Snapshot& post,
                         const std::vector<RuleSet>& rule_sets,
                         const std::vector<intent::ExpectedDifference>& expected,
                         const ExceptionRegister& exceptions, const CompareOptions& options) {
  return Engine(pre, post, rule_sets, expected, exceptions, options).run();
}

}  // namespace fabgate::compare
