#include "gates/compare/snapshot.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "adapters/core/utf8.h"
#include "gates/compare/snapshot_walker.h"

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

namespace reading {

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

}  // namespace reading

namespace {

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
      return reading::place(text, problem->offset) + ": not UTF-8 (near '" +
             escape_invalid_utf8(excerpt) + "')";
    }
  }
  if (code == simdjson::UNCLOSED_STRING || code == simdjson::UNESCAPED_CHARS) {
    bool unclosed = false;
    if (auto at = find_string_problem(text, &unclosed))
      return reading::place(text, *at) +
             (unclosed ? ": a string that is never closed"
                       : ": a control character inside a string (escape it)");
  }
  if (code == simdjson::EMPTY) return "the file holds no JSON (it is empty or only blanks)";
  return std::string("not valid JSON: ") + simdjson::error_message(code);
}

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

Result<detail::ParsedDocument> parse_padded_parts(ondemand::parser& parser,
                                                  simdjson::padded_string_view text,
                                                  const std::string& file_name,
                                                  std::size_t threaded_from) {
  ondemand::document document;
  if (auto code = parser.iterate(text).get(document))
    return invalid(file_name, describe_stage1_error(code, text));
  reading::TableBuilder builder(text.size() >= threaded_from);
  reading::SnapshotWalker walker(text, document, builder);
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
  return std::move(walker.parsed);
}

Result<Snapshot> parse_padded(ondemand::parser& parser, simdjson::padded_string_view text,
                              const std::string& file_name, std::size_t threaded_from) {
  auto parts = parse_padded_parts(parser, text, file_name, threaded_from);
  if (!parts) return parts.error();
  return detail::assemble_snapshot(parts.value(), file_name);
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

Result<detail::ParsedDocument> load_snapshot_parts(const std::string& path) {
  simdjson::padded_string buffer;
  auto text = read_padded(path, buffer);
  if (!text) return text.error();
  ondemand::parser parser;
  return parse_padded_parts(parser, *text, path, kThreadedBuildBytes);
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
