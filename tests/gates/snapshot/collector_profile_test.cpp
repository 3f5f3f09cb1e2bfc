#include "gates/snapshot/collector_profile.h"

#include <gtest/gtest.h>

#include <map>

namespace fabgate::snapshot {
namespace {

TEST(CollectorProfile, ShippedProfilesAreEmbeddedAndValid) {
  // Given the profiles compiled into the binary, then linux and frr load; frr collects
  // identity, interfaces, LLDP neighbours, routes, the multipath hash, packet filters, the IP
  // stack's receive errors, bgp, bfd, evpn and its running configuration; linux the Linux
  // categories without the FRR ones and without packet filters (other agents write a host's).
  auto profiles = load_profiles();
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->count("linux"), 1u);
  ASSERT_EQ(profiles->count("frr"), 1u);
  std::vector<std::string> categories;
  for (const auto& source : profiles->at("frr").sources) categories.push_back(source.category);
  EXPECT_EQ(categories, (std::vector<std::string>{"identity", "interfaces", "lldp", "routes",
                                                  "multipath", "packet_filter", "ip_stack", "bgp",
                                                  "bfd", "evpn", "config"}));
  categories.clear();
  for (const auto& source : profiles->at("linux").sources) categories.push_back(source.category);
  EXPECT_EQ(categories, (std::vector<std::string>{"identity", "interfaces", "routes", "multipath",
                                                  "ip_stack"}));
}

TEST(CollectorProfile, OpenconfigAndPlatformProfilesAreGnmiOnlyWithTheirQuirks) {
  // Given the shipped openconfig, sonic, eos, srlinux, junos and nxos profiles, then each
  // collects identity, interfaces, bgp, lldp and config with gNMI Gets only (no SSH command),
  // config as a Get of type CONFIG, in the encoding its NOS documents, and SR Linux and NX-OS
  // ask for origin openconfig while SONiC module-qualifies its paths.
  auto profiles = load_profiles();
  ASSERT_TRUE(profiles) << profiles.error().message;
  const std::map<std::string, gnmi::Encoding> encodings = {
      {"openconfig", gnmi::Encoding::json_ietf}, {"sonic", gnmi::Encoding::json_ietf},
      {"eos", gnmi::Encoding::json_ietf},        {"srlinux", gnmi::Encoding::json_ietf},
      {"junos", gnmi::Encoding::json},           {"nxos", gnmi::Encoding::json}};
  for (const auto& [platform, encoding] : encodings) {
    SCOPED_TRACE(platform);
    ASSERT_EQ(profiles->count(platform), 1u);
    std::vector<std::string> categories;
    for (const auto& source : profiles->at(platform).sources) {
      categories.push_back(source.category);
      ASSERT_TRUE(source.gnmi) << source.category;
      EXPECT_TRUE(source.commands.empty());
      EXPECT_EQ(source.gnmi->encoding, encoding) << source.category;
      EXPECT_EQ(source.gnmi->type,
                source.category == "config" ? gnmi::DataType::config : gnmi::DataType::all);
      for (const auto& path : source.gnmi->paths) {
        if (platform == "srlinux" || platform == "nxos") {
          EXPECT_EQ(path.rfind("openconfig:/", 0), 0u) << path;
        }
        if (platform == "sonic" && path != "/") {
          EXPECT_EQ(path.rfind("/openconfig-", 0), 0u) << path;
        }
      }
    }
    EXPECT_EQ(categories, (std::vector<std::string>{"identity", "interfaces", "bgp", "lldp",
                                                    "routes", "config"}));
  }
}

TEST(CollectorProfile, AnOverrideReplacesTheShippedProfileOfItsPlatform) {
  // Given an intent repository's own linux profile, then it replaces the shipped one.
  auto profiles =
      load_profiles({{"linux",
                      "platform: linux\nsources:\n  - category: interfaces\n"
                      "    commands:\n      - {run: ip -j -s link, parse: ip-link}\n"}});
  ASSERT_TRUE(profiles) << profiles.error().message;
  ASSERT_EQ(profiles->at("linux").sources.size(), 1u);
  EXPECT_EQ(profiles->at("linux").sources[0].timeout, Duration{10'000});
  EXPECT_EQ(profiles->count("frr"), 1u);
}

TEST(CollectorProfile, ListsEveryProblemWithFileLineAndColumn) {
  // Given a profile with a misspelt normalizer, a normalizer under the wrong category and a
  // source without commands, then all three are reported with their positions.
  const char* text =
      "platform: linux\n"
      "sources:\n"
      "  - category: interfaces\n"
      "    commands:\n"
      "      - {run: ip -j link, parse: ip-lnk}\n"
      "      - {run: ip -j route, parse: ip-route-v4}\n"
      "  - category: bgp\n"
      "    commands: []\n";
  auto profile = parse_collector_profile(text, "policies/collectors/linux.yaml");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().exit_code, ExitCode::invalid_input);
  const auto& details = profile.error().details;
  ASSERT_EQ(details.size(), 3u);
  EXPECT_NE(details[0].find("linux.yaml:5:"), std::string::npos);
  EXPECT_NE(details[0].find("did you mean 'ip-link'"), std::string::npos);
  EXPECT_NE(details[1].find("linux.yaml:6:"), std::string::npos);
  EXPECT_NE(details[1].find("fills 'routes'"), std::string::npos);
  EXPECT_NE(details[2].find("no commands"), std::string::npos);
}

TEST(CollectorProfile, MaxOutputIsASizeUpToOneGibibyteForCommandsOnly) {
  // Given a routes source that keeps 512MiB, then its commands keep that much; given a size in
  // words, one over 1GiB and one on a gNMI source, then each is refused at its line.
  auto routes = parse_collector_profile(
      "platform: linux\nsources:\n  - category: routes\n    max_output: 512MiB\n"
      "    commands:\n      - {run: ip -j route, parse: ip-route-v4}\n",
      "policies/collectors/linux.yaml");
  ASSERT_TRUE(routes) << routes.error().message;
  EXPECT_EQ(routes->sources.at(0).max_output, std::size_t{512} << 20);
  for (const auto& [size, problem] : std::map<std::string, std::string>{
           {"lots", "max_output 'lots' is not a size"}, {"2GiB", "is more than 1GiB"}}) {
    auto wrong = parse_collector_profile(
        "platform: linux\nsources:\n  - category: routes\n    max_output: " + size +
            "\n    commands:\n      - {run: ip -j route, parse: ip-route-v4}\n",
        "policies/collectors/linux.yaml");
    ASSERT_FALSE(wrong);
    ASSERT_EQ(wrong.error().details.size(), 1u);
    EXPECT_NE(wrong.error().details[0].find("linux.yaml:4:"), std::string::npos)
        << wrong.error().details[0];
    EXPECT_NE(wrong.error().details[0].find(problem), std::string::npos)
        << wrong.error().details[0];
  }
  auto gnmi = parse_collector_profile(
      "platform: openconfig\nsources:\n  - category: interfaces\n    max_output: 8MiB\n"
      "    gnmi: {paths: [/interfaces]}\n",
      "policies/collectors/openconfig.yaml");
  ASSERT_FALSE(gnmi);
  EXPECT_NE(gnmi.error().details.at(0).find("max_output is for commands' output"),
            std::string::npos);
}

TEST(CollectorProfile, AGnmiSourceIsOneGetOfItsPaths) {
  // Given a source written as gNMI paths (encoding left out, then given as json), then the
  // profile keeps the paths as written, defaults to JSON_IETF, and the source has no commands.
  const char* text =
      "platform: switch\n"
      "sources:\n"
      "  - category: interfaces\n"
      "    timeout: 3s\n"
      "    gnmi:\n"
      "      paths: [\"/interfaces/interface[name=*]/state\"]\n"
      "  - category: identity\n"
      "    gnmi: {paths: [/system/state], encoding: json}\n"
      "  - category: routes\n"
      "    commands:\n"
      "      - {run: ip -j route show table main, parse: ip-route-v4}\n";
  auto profile = parse_collector_profile(text, "policies/collectors/switch.yaml");
  ASSERT_TRUE(profile) << profile.error().message << "\n"
                       << (profile ? "" : profile.error().details.front());
  ASSERT_EQ(profile->sources.size(), 3u);
  const auto& interfaces = profile->sources[0];
  ASSERT_TRUE(interfaces.gnmi);
  EXPECT_TRUE(interfaces.commands.empty());
  EXPECT_EQ(interfaces.gnmi->paths,
            (std::vector<std::string>{"/interfaces/interface[name=*]/state"}));
  EXPECT_EQ(interfaces.gnmi->encoding, gnmi::Encoding::json_ietf);
  EXPECT_EQ(interfaces.timeout, Duration{3'000});
  ASSERT_TRUE(profile->sources[1].gnmi);
  EXPECT_EQ(profile->sources[1].gnmi->encoding, gnmi::Encoding::json);
  EXPECT_FALSE(profile->sources[2].gnmi);
}

TEST(CollectorProfile, GnmiSourceProblemsAreReportedWithFileLineAndColumn) {
  // Given a source with both commands and gNMI, an unparsable path, a category gNMI cannot
  // fill, an unknown encoding and a source with neither, then each is reported at its place
  // with what is allowed.
  const char* text =
      "platform: switch\n"
      "sources:\n"
      "  - category: interfaces\n"
      "    commands:\n"
      "      - {run: ip -j -s link show, parse: ip-link}\n"
      "    gnmi: {paths: [/interfaces]}\n"
      "  - category: bgp\n"
      "    gnmi:\n"
      "      paths:\n"
      "        - /network-instances/network-instance[name=default\n"
      "  - category: bfd\n"
      "    gnmi: {paths: [/bfd]}\n"
      "  - category: identity\n"
      "    gnmi: {paths: [/system/state], encoding: proto}\n"
      "  - category: evpn\n"
      "    timeout: 5s\n";
  auto profile = parse_collector_profile(text, "policies/collectors/switch.yaml");
  ASSERT_FALSE(profile);
  EXPECT_EQ(profile.error().exit_code, ExitCode::invalid_input);
  const auto& details = profile.error().details;
  std::string all;
  for (const auto& line : details) all += line + "\n";
  ASSERT_EQ(details.size(), 5u) << all;
  EXPECT_NE(details[0].find("switch.yaml:6:5"), std::string::npos) << all;
  EXPECT_NE(details[0].find("both 'commands' and 'gnmi'"), std::string::npos) << all;
  EXPECT_NE(details[1].find("switch.yaml:10:11"), std::string::npos) << all;
  EXPECT_NE(details[1].find("invalid gNMI path"), std::string::npos) << all;
  EXPECT_NE(details[1].find("never closed"), std::string::npos) << all;
  EXPECT_NE(details[2].find("switch.yaml:11:15"), std::string::npos) << all;
  EXPECT_NE(details[2].find("'bfd' cannot be collected over gNMI"), std::string::npos) << all;
  EXPECT_NE(details[2].find("identity, interfaces, bgp"), std::string::npos) << all;
  EXPECT_NE(details[3].find("switch.yaml:14:"), std::string::npos) << all;
  EXPECT_NE(details[3].find("proto"), std::string::npos) << all;
  EXPECT_NE(details[4].find("switch.yaml:15:"), std::string::npos) << all;
  EXPECT_NE(details[4].find("needs 'commands' or 'gnmi'"), std::string::npos) << all;
}

}  // namespace
}  // namespace fabgate::snapshot
