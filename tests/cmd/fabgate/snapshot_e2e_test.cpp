// `fabgate snapshot` end to end, through the real binary, a real git repository and a real sshd
// on loopback: a device whose route table is far over the SSH session's 4 MiB, read into compact
// tables and written back as the snapshot's lists, to a file and to standard output.

#include <filesystem>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using nlohmann::json;

// `ip -j route` of `count` routes, each over two gateways, then a connected one: about 190 bytes a
// route.
std::string ip_routes(std::size_t count) {
  std::string text = "[";
  for (std::size_t i = 0; i < count; ++i)
    text += R"({"dst":"10.)" + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) +
            "." + std::to_string(i & 255) +
            R"(/32","protocol":"bgp","metric":20,"flags":[],"nexthops":[{"gateway":"169.254.0.1",)"
            R"("dev":"swp1","weight":1,"flags":["onlink"]},{"gateway":"169.254.0.3","dev":"swp2",)"
            R"("weight":1,"flags":["onlink"]}]},)";
  return text + R"({"dst":"192.168.0.0/24","dev":"eth0","protocol":"kernel","scope":"link"}])";
}

class SnapshotEndToEnd : public testing::FabgateEndToEnd {};

TEST_F(SnapshotEndToEnd, ARouteTableOverTheSessionsCapIsWrittenWholeFromTheCompactTables) {
  // Given an intent repository whose linux profile reads d1's routes from a 60,000-route
  // `ip -j route` (about 11 MB) with `max_output: 64MiB`, then `fabgate snapshot d1` exits 0 and
  // the snapshot, written to a file and to standard output, holds every route with its
  // protocol, metric and both next hops, and the compare engine's reader (`fabgate diff`) reads
  // it as the same table.
  const std::string routes = sshd_->home() + "/routes.json";
  testing::write_file(routes, ip_routes(60'000));
  ASSERT_GT(std::filesystem::file_size(routes), std::uintmax_t{4} << 20);
  repo_.write("policies/collectors/linux.yaml",
              "platform: linux\nsources:\n  - category: identity\n    commands:\n"
              "      - {run: hostname, parse: hostname}\n  - category: routes\n"
              "    timeout: 30s\n    max_output: 64MiB\n    commands:\n"
              "      - {run: cat " + routes + ", parse: ip-route-v4}\n");
  commit_intent(R"(id: c
title: unused here
targets: [d1]
bounds: {max_targets: 1, step_timeout: 10s, deadline: 1m}
steps:
  - {device: d1, run: "true"}
rollback:
  - {device: d1, run: "true"}
acceptance:
  probes:
    - {name: up, host: d1, run: "true"}
)");

  const std::string file = repo_.file("snapshot.json");
  auto out = fabgate("snapshot d1 --output " + testing::shell_quoted(file));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const json written = json::parse(testing::read_file(file));
  const json& list = written.at("devices").at("d1").at("routes").at("ipv4");
  ASSERT_EQ(list.size(), 60'001u);
  EXPECT_EQ(list.at(0), json::parse(R"({"prefix": "10.0.0.0/32", "protocol": "bgp",
      "metric": 20, "nexthops": ["169.254.0.1", "169.254.0.3"]})"));
  EXPECT_EQ(written.at("devices").at("d1").at("sources").at("routes").at("status"), "ok");

  auto to_stdout = repo_.run(testing::shell_quoted(testing::kFabgate) + " snapshot d1 2>/dev/null");
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.output.substr(0, 2000);
  EXPECT_EQ(json::parse(to_stdout.output).at("devices").at("d1").at("routes"),
            written.at("devices").at("d1").at("routes"));

  // The compare engine reads all of it: against a copy without one route, `fabgate diff` names
  // exactly that route.
  json post = written;
  auto& post_list = post["devices"]["d1"]["routes"]["ipv4"];
  post_list.erase(post_list.begin() + 30'000);
  const std::string post_file = repo_.file("post.json");
  testing::write_file(post_file, post.dump());
  auto diff = fabgate("diff " + testing::shell_quoted(file) + " " + testing::shell_quoted(post_file));
  EXPECT_EQ(diff.exit_code, 3) << diff.output.substr(0, 3000);
  EXPECT_NE(diff.output.find("10.0.117.48/32"), std::string::npos) << diff.output.substr(0, 3000);
  EXPECT_EQ(diff.output.find("10.0.117.49/32"), std::string::npos) << diff.output.substr(0, 3000);
}

}  // namespace
}  // namespace fabgate
