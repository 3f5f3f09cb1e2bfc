#include "gates/compare/snapshot.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "adapters/core/utf8.h"
#include "tests/gates/compare/fixtures.h"

namespace fabgate::compare {
namespace {

using nlohmann::json;
using testing::document;
using testing::leaf;

TEST(Snapshot, RoutesBecomeTypedTablesAndOtherFactsStayATree) {
  // Given a device with interfaces, a no-evidence bgp source and two route families, then
  // routes land in RouteTables, facts keep the rest and the source reason is kept.
  json device = leaf({{"interfaces", {{"eth1", {{"oper", "up"}}}}},
                      {"routes",
                       {{"ipv4", json::array({{{"prefix", "10.0.0.0/24"},
                                               {"protocol", "bgp"},
                                               {"metric", 20},
                                               {"nexthops", {"10.0.1.0"}},
                                               {"extra", {{"ignored", true}}}}})},
                        {"ipv6", json::array()}}}});
  device["sources"]["bgp"] = {{"status", "no-evidence"}, {"reason", "vtysh: exit 127"}};
  auto parsed = parse_snapshot(document({{"leaf1", device}}).dump(), "s.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const DeviceSnapshot& leaf1 = parsed->devices.at("leaf1");
  EXPECT_TRUE(leaf1.has_routes);
  EXPECT_EQ(leaf1.routes.at("ipv4").size(), 1u);
  EXPECT_EQ(leaf1.routes.at("ipv6").size(), 0u);
  EXPECT_FALSE(leaf1.facts.contains("routes"));
  EXPECT_EQ(leaf1.facts["interfaces"]["eth1"]["oper"], "up");
  ASSERT_NE(leaf1.source("bgp"), nullptr);
  EXPECT_FALSE(leaf1.source("bgp")->ok);
  EXPECT_EQ(leaf1.source("bgp")->reason, "vtysh: exit 127");
}

TEST(Snapshot, MalformedDocumentsAreInvalidInputNamingFileAndElement) {
  // Given broken JSON, a wrong format tag, and a route with a bad prefix, then each is
  // invalid input that names the file and, for the route, its position.
  auto broken = parse_snapshot("{\"format\": ", "broken.json");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(broken.error().message.find("broken.json"), std::string::npos);

  json wrong = document(json::object());
  wrong["format"] = "something/2";
  auto tag = parse_snapshot(wrong.dump(), "tag.json");
  ASSERT_FALSE(tag);
  EXPECT_NE(tag.error().message.find("format"), std::string::npos);

  json bad_route =
      document({{"leaf1", leaf({{"routes",
                                 {{"ipv4", json::array({{{"prefix", "10.0.0.0/24"}},
                                                        {{"prefix", "300.0.0.0/24"}}})}}}})}});
  auto route = parse_snapshot(bad_route.dump(), "routes.json");
  ASSERT_FALSE(route);
  EXPECT_NE(route.error().message.find("devices.leaf1.routes.ipv4[1]"), std::string::npos)
      << route.error().message;
}

TEST(Snapshot, MissingFileIsInvalidInput) {
  // Given a path that does not exist, then loading is invalid input naming it.
  auto loaded = load_snapshot_file("/nonexistent/pre.json");
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(loaded.error().message.find("/nonexistent/pre.json"), std::string::npos);
}

// A folder under /tmp, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fabgate-snap-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A snapshot of leaf1 whose fact `deep` is `levels` arrays inside each other; the document's
// own objects (root, devices, leaf1) add 3 levels.
std::string nested_snapshot(std::size_t levels) {
  std::string facts = std::string(levels, '[') + std::string(levels, ']');
  std::string text = document({{"leaf1", leaf({{"deep", 0}})}}).dump();
  auto at = text.find("\"deep\":0");
  return text.replace(at, 8, "\"deep\":" + facts);
}

TEST(Snapshot, NestingPastTheLimitIsRefusedAsTheParserMeetsIt) {
  // Given a snapshot nested 200,000 levels deep (which crashed `fabgate diff`), then parsing
  // is invalid input naming the file, the limit and where the nesting is.
  auto parsed = parse_snapshot(nested_snapshot(200'000), "deep.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(parsed.error().message.find("snapshot deep.json: objects and arrays nested more than "
                                        "64 levels deep (under 'devices.leaf1.deep')"),
            std::string::npos)
      << parsed.error().message;
}

TEST(Snapshot, NestingUpToTheLimitIsAccepted) {
  // Given facts that bring the document to exactly the limit, then it parses; one level more
  // is refused.
  auto at_limit = parse_snapshot(nested_snapshot(kMaxSnapshotDepth - 3), "ok.json");
  EXPECT_TRUE(at_limit) << at_limit.error().message;
  EXPECT_FALSE(parse_snapshot(nested_snapshot(kMaxSnapshotDepth - 2), "over.json"));
}

TEST(Snapshot, StringsThatAreNotUtf8AreRefusedAndTheMessageIsUtf8) {
  // Given a hostname with a byte that is not UTF-8, then parsing is invalid input naming the
  // file and the byte offset, and the message spells the byte out instead of repeating it
  // (it goes to the terminal and into JSON output).
  std::string text = document({{"leaf1", leaf({})}}).dump();
  auto at = text.find("\"leaf1\"", text.find("hostname"));
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 1, 5,
               "le\xff"
               "af");
  auto parsed = parse_snapshot(text, "latin.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(parsed.error().message.find("snapshot latin.json: byte " + std::to_string(at + 4)),
            std::string::npos)
      << parsed.error().message;
  EXPECT_NE(parsed.error().message.find("\\xff"), std::string::npos) << parsed.error().message;
  EXPECT_FALSE(find_invalid_utf8(parsed.error().message));
}

TEST(Snapshot, AFolderOrAFifoIsRefusedAsNotARegularFile) {
  // Given a directory and a FIFO with no writer as snapshot paths (a directory used to end in
  // std::bad_alloc, a FIFO would block forever), then each is invalid input naming the path.
  ScratchDir scratch;
  std::filesystem::create_directory(scratch.file("pre.json"));
  auto folder = load_snapshot_file(scratch.file("pre.json"));
  ASSERT_FALSE(folder);
  EXPECT_EQ(folder.error().exit_code, ExitCode::invalid_input);
  EXPECT_NE(
      folder.error().message.find(scratch.file("pre.json") + ": not a regular file (a directory)"),
      std::string::npos)
      << folder.error().message;

  ASSERT_EQ(::mkfifo(scratch.file("fifo.json").c_str(), 0600), 0);
  auto fifo = load_snapshot_file(scratch.file("fifo.json"));
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file (a special file)"), std::string::npos)
      << fifo.error().message;
}

TEST(Snapshot, FilesOverTheSizeLimitAreRefusedUnread) {
  // Given a (sparse) file one byte over the limit, then it is refused by its size, naming it,
  // without a buffer of that size ever being allocated.
  ScratchDir scratch;
  auto path = scratch.file("huge.json");
  { std::ofstream create(path); }
  std::filesystem::resize_file(path, kMaxSnapshotBytes + 1);
  auto loaded = load_snapshot_file(path);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find(path + ": 1073741825 bytes, more than the 1024 MiB"),
            std::string::npos)
      << loaded.error().message;
}

}  // namespace
}  // namespace fabgate::compare
