// Collecting a device whose profile has gNMI sources, with a scripted fetcher in place of a
// target: how replies, missing categories and failures end up in the snapshot and its records.
// The same path against a real fabgate-gnmid is gnmi_collection_test.cpp.

#include "gates/snapshot/gnmi_source.h"

#include <gtest/gtest.h>

#include <map>

#include "gates/snapshot/device_collector.h"

namespace fabgate::snapshot {
namespace {

using nlohmann::json;

gnmi::GnmiUpdate update(const char* path, const json& value) {
  return {*gnmi::parse_path(path), value.dump()};
}

gnmi::GnmiNotification interfaces_reply() {
  gnmi::GnmiNotification notification;
  notification.timestamp_ns = 1'700'000'000'000'000'000;
  notification.updates.push_back(update("/interfaces/interface[name=lo]/state",
                                        {{"name", "lo"},
                                         {"mtu", 65536},
                                         {"admin-status", "UP"},
                                         {"oper-status", "UNKNOWN"},
                                         {"counters", {{"in-pkts", "7"}, {"out-pkts", "7"}}}}));
  return notification;
}

gnmi::GnmiNotification system_reply() {
  gnmi::GnmiNotification notification;
  notification.updates.push_back(
      update("/system/state", {{"hostname", "leaf9"},
                               {"software-version",
                                "Debian GNU/Linux 12 (bookworm); Linux 6.1.0-18-amd64; "
                                "FRRouting 9.1"}}));
  return notification;
}

// Answers each Get with what the test scripted for its first path, and notes its deadline.
class ScriptedFetcher final : public GnmiFetcher {
 public:
  using Answer = gnmi::GnmiResult<std::vector<gnmi::GnmiNotification>>;
  std::map<std::string, Answer> answers;
  std::map<std::string, Duration> deadlines;  // first path -> the deadline it was asked with

  Answer get(const std::string& device, const std::vector<std::string>& paths, gnmi::Encoding,
             Duration deadline) override {
    deadlines[paths.front()] = deadline;
    auto found = answers.find(paths.front());
    if (found != answers.end()) return found->second;
    return gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::rejected,
                             "gnmi: " + device + ": Get " + paths.front() + ": not scripted"};
  }
};

// Counts connects and refuses them: a gNMI-only profile must not open SSH at all.
class RefusingConnector final : public ssh::ShellConnector {
 public:
  int connects = 0;
  Expected<std::unique_ptr<ssh::RemoteShell>, ssh::SshFailure> connect(
      const ssh::SshDevice&, ssh::CredentialRole) override {
    ++connects;
    return ssh::SshFailure{ssh::SshFailure::Kind::unreachable, "connection refused"};
  }
};

CollectorProfile gnmi_profile() {
  auto profile = parse_collector_profile(
      "platform: switch\n"
      "sources:\n"
      "  - category: identity\n"
      "    timeout: 4s\n"
      "    gnmi: {paths: [/system/state]}\n"
      "  - category: interfaces\n"
      "    gnmi: {paths: [\"/interfaces/interface[name=*]/state\"]}\n",
      "switch.yaml");
  EXPECT_TRUE(profile) << profile.error().message;
  return profile.value();
}

const ssh::SshDevice kDevice{"leaf9", "192.0.2.9", 22, {}, {}};

TEST(GnmiSource, KeptApartAWholeAftIsReadIntoTablesAndLeavesNoCopyOfTheReply) {
  // Given a routes source answered with one update of the default instance's AFT, then with
  // route lists kept apart (`fabgate snapshot`) the routes are compact tables, the document has
  // no routes lists, and the record holds no copy of the reply; in the document (a gated run),
  // the same routes are lists and the record keeps the reply for commands.jsonl.
  auto profile = parse_collector_profile(
      "platform: switch\nsources:\n  - category: routes\n"
      "    gnmi: {paths: [\"/network-instances/network-instance[name=default]/afts\"]}\n",
      "switch.yaml");
  ASSERT_TRUE(profile) << profile.error().message;
  gnmi::GnmiNotification aft;
  aft.updates.push_back(update(
      "/network-instances/network-instance[name=default]/afts",
      {{"ipv4-unicast",
        {{"ipv4-entry",
          {{{"prefix", "10.0.2.0/24"},
            {"state", {{"origin-protocol", "BGP"}, {"next-hop-group", "1"}}}}}}}},
       {"next-hop-groups",
        {{"next-hop-group", {{{"id", "1"}, {"next-hops", {{"next-hop", {{{"index", "1"}}}}}}}}}}},
       {"next-hops", {{"next-hop", {{{"index", "1"}, {"state", {{"ip-address", "10.0.1.0"}}}}}}}}}));
  ScriptedFetcher fetcher;
  fetcher.answers.emplace("/network-instances/network-instance[name=default]/afts",
                          std::vector{aft});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto apart = collect_device(kDevice, profile.value(), cache, &fetcher, RouteLists::apart);
  ASSERT_TRUE(apart.missing.empty()) << apart.missing[0].reason;
  const auto& table = apart.route_tables.at("ipv4");
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table.nexthops_of(table.vrfs().at("default").front()),
            (std::vector<std::string>{"10.0.1.0"}));
  EXPECT_FALSE(apart.document.contains("routes"));
  EXPECT_EQ(apart.document.at("sources").at("routes").at("status"), "ok");
  EXPECT_TRUE(apart.gnmi_records.at(0).reply.is_null());

  auto lists = collect_device(kDevice, profile.value(), cache, &fetcher);
  EXPECT_TRUE(lists.route_tables.empty());
  EXPECT_EQ(lists.document.at("routes").at("ipv4"), json::parse(R"([{"prefix": "10.0.2.0/24",
            "protocol": "bgp", "nexthops": ["10.0.1.0"]}])"));
  EXPECT_FALSE(lists.gnmi_records.at(0).reply.is_null());
}

TEST(GnmiSource, RepliesFillTheCategoriesWithTheirMetadataAndRawRecord) {
  // Given a profile of gNMI sources and a target answering both Gets, then identity and
  // interfaces are collected with the values of the reply, no SSH session is opened, each source
  // names its path with status ok and the Get's timing, and the record keeps the raw reply.
  ScriptedFetcher fetcher;
  fetcher.answers.emplace("/system/state", std::vector{system_reply()});
  fetcher.answers.emplace("/interfaces/interface[name=*]/state", std::vector{interfaces_reply()});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, &fetcher);

  EXPECT_EQ(connector.connects, 0);
  EXPECT_TRUE(snapshot.reachable);
  EXPECT_TRUE(snapshot.missing.empty()) << snapshot.missing.front().reason;
  EXPECT_EQ(snapshot.collected, (std::vector<std::string>{"identity", "interfaces"}));
  const json& document = snapshot.document;
  EXPECT_EQ(document["identity"]["platform"], "switch");
  EXPECT_EQ(document["identity"]["hostname"], "leaf9");
  EXPECT_EQ(document["identity"]["frr_version"], "9.1");
  EXPECT_EQ(document["interfaces"]["lo"]["mtu"], 65536);
  EXPECT_EQ(document["interfaces"]["lo"]["counters"]["rx_packets"], 7);
  const json& source = document["sources"]["interfaces"];
  EXPECT_EQ(source["status"], "ok");
  ASSERT_EQ(source["commands"].size(), 1u);
  EXPECT_EQ(source["commands"][0]["path"], "/interfaces/interface[name=*]/state");
  EXPECT_EQ(source["commands"][0]["transport"], "gnmi");
  EXPECT_EQ(source["commands"][0]["status"], "ok");
  EXPECT_EQ(source["commands"][0]["parse"], "ok");
  EXPECT_TRUE(source["commands"][0].contains("started_at"));
  EXPECT_TRUE(source["commands"][0].contains("duration_ms"));
  // The source timeout is the Get's deadline (identity says 4s, interfaces has the default).
  EXPECT_EQ(fetcher.deadlines["/system/state"], Duration{4'000});
  EXPECT_EQ(fetcher.deadlines["/interfaces/interface[name=*]/state"], Duration{10'000});

  ASSERT_EQ(snapshot.gnmi_records.size(), 2u);
  json entry = evidence_entry(snapshot.gnmi_records[1]);
  EXPECT_EQ(entry["device"], "leaf9");
  EXPECT_EQ(entry["transport"], "gnmi");
  EXPECT_EQ(entry["rpc"], "get");
  EXPECT_EQ(entry["paths"], json::array({"/interfaces/interface[name=*]/state"}));
  EXPECT_EQ(entry["status"], "ok");
  EXPECT_EQ(entry["reply"][0]["updates"][0]["path"], "/interfaces/interface[name=lo]/state");
  EXPECT_EQ(entry["reply"][0]["updates"][0]["value"]["mtu"], 65536);
}

TEST(GnmiSource, AReplyWithoutTheCategoryIsNoEvidenceNotAnEmptyValue) {
  // Given a target that answers the interfaces Get with system state only, then interfaces is
  // no-evidence and absent from the facts, with a reason naming device, Get and path.
  ScriptedFetcher fetcher;
  fetcher.answers.emplace("/system/state", std::vector{system_reply()});
  fetcher.answers.emplace("/interfaces/interface[name=*]/state", std::vector{system_reply()});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, &fetcher);

  EXPECT_EQ(snapshot.collected, (std::vector<std::string>{"identity"}));
  ASSERT_EQ(snapshot.missing.size(), 1u);
  EXPECT_EQ(snapshot.missing[0].category, "interfaces");
  EXPECT_EQ(snapshot.missing[0].reason,
            "gnmi: leaf9: Get /interfaces/interface[name=*]/state: the reply has no interfaces "
            "data");
  EXPECT_FALSE(snapshot.document.contains("interfaces"));
  const json& source = snapshot.document["sources"]["interfaces"];
  EXPECT_EQ(source["status"], "no-evidence");
  EXPECT_EQ(source["reason"], snapshot.missing[0].reason);
  EXPECT_EQ(source["commands"][0]["parse"], "error: no interfaces data in the reply");
}

TEST(GnmiSource, AReplyNestedTooDeeplyIsNoEvidenceAndKeptAsText) {
  // Given a target answering the interfaces Get with 300,000 levels of nesting, then
  // interfaces is no-evidence naming the device, the Get, the path and the depth, and the
  // record keeps the value as text, so the evidence can be written (dumped) without a stack
  // overflow.
  const std::string deep = std::string(300'000, '[') + std::string(300'000, ']');
  gnmi::GnmiNotification hostile;
  hostile.updates.push_back({*gnmi::parse_path("/interfaces/interface[name=lo]/state"), deep});
  ScriptedFetcher fetcher;
  fetcher.answers.emplace("/system/state", std::vector{system_reply()});
  fetcher.answers.emplace("/interfaces/interface[name=*]/state", std::vector{hostile});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, &fetcher);

  EXPECT_EQ(snapshot.collected, (std::vector<std::string>{"identity"}));
  ASSERT_EQ(snapshot.missing.size(), 1u);
  EXPECT_EQ(snapshot.missing[0].reason,
            "gnmi: leaf9: Get /interfaces/interface[name=*]/state: unreadable reply: value at "
            "/interfaces/interface[name=lo]/state is nested deeper than 64 levels");
  ASSERT_EQ(snapshot.gnmi_records.size(), 2u);
  json entry = evidence_entry(snapshot.gnmi_records[1]);
  EXPECT_EQ(entry["reply"][0]["updates"][0]["value"], deep);
  EXPECT_GT(entry.dump().size(), deep.size());
}

TEST(GnmiSource, AnEmptyReplyIsNoEvidence) {
  // Given a target that answers with no notification at all, then nothing is collected.
  ScriptedFetcher fetcher;
  fetcher.answers.emplace("/system/state", std::vector<gnmi::GnmiNotification>{});
  fetcher.answers.emplace("/interfaces/interface[name=*]/state",
                          std::vector<gnmi::GnmiNotification>{});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, &fetcher);

  EXPECT_TRUE(snapshot.collected.empty());
  EXPECT_EQ(snapshot.missing.size(), 2u);
  EXPECT_FALSE(snapshot.document.contains("interfaces"));
  // Nothing returned identity, so the profile's platform is not written there alone.
  EXPECT_EQ(snapshot.document["identity"], json::object());
}

TEST(GnmiSource, AFailedGetIsNoEvidenceWithTheTargetsReason) {
  // Given a Get that times out and one the target rejects, then both sources are no-evidence
  // with the failure as reason, the metadata carries the failure kind, and the device still
  // counts as reachable (something answered, or at least nothing refused the connection).
  ScriptedFetcher fetcher;
  const std::string timeout =
      "gnmi: leaf9 (192.0.2.9:9339): Get /system/state: timed out after 4s (gRPC status 4)";
  fetcher.answers.emplace("/system/state",
                          gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::timeout, timeout});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, &fetcher);

  EXPECT_TRUE(snapshot.collected.empty());
  ASSERT_EQ(snapshot.missing.size(), 2u);
  EXPECT_EQ(snapshot.missing[0].reason, timeout);
  EXPECT_NE(snapshot.missing[1].reason.find("Get /interfaces/interface[name=*]/state"),
            std::string::npos);
  const json& identity = snapshot.document["sources"]["identity"];
  EXPECT_EQ(identity["status"], "no-evidence");
  EXPECT_EQ(identity["commands"][0]["status"], "timeout");
  EXPECT_EQ(identity["commands"][0]["failure"], timeout);
  EXPECT_EQ(identity["commands"][0]["parse"], "skipped");
  json entry = evidence_entry(snapshot.gnmi_records[0]);
  EXPECT_EQ(entry["failure"], "timeout");
  EXPECT_EQ(entry["message"], timeout);
  EXPECT_TRUE(entry["reply"].is_null());
  EXPECT_TRUE(snapshot.reachable);
}

TEST(GnmiSource, AnUnreachableTargetMakesTheDeviceUnreachable) {
  // Given a target nothing answers for, then the device is reported unreachable.
  ScriptedFetcher fetcher;
  for (const char* path : {"/system/state", "/interfaces/interface[name=*]/state"})
    fetcher.answers.emplace(
        path, gnmi::GnmiFailure{gnmi::GnmiFailure::Kind::unreachable,
                                std::string("gnmi: leaf9: Get ") + path + ": connection refused"});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, &fetcher);

  EXPECT_FALSE(snapshot.reachable);
  EXPECT_EQ(snapshot.missing.size(), 2u);
}

TEST(GnmiSource, WithoutAFetcherNothingIsSentAndNothingPasses) {
  // Given a run that wired no gNMI client, then every gNMI source is no-evidence and its record
  // says nothing was sent.
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, gnmi_profile(), cache, nullptr);

  EXPECT_TRUE(snapshot.collected.empty());
  ASSERT_EQ(snapshot.missing.size(), 2u);
  EXPECT_NE(snapshot.missing[0].reason.find("no gNMI client"), std::string::npos);
  EXPECT_FALSE(snapshot.gnmi_records[0].sent);
  EXPECT_FALSE(snapshot.document["sources"]["identity"]["commands"][0].contains("started_at"));
}

TEST(GnmiSource, SshAndGnmiSourcesFailIndependently) {
  // Given a profile mixing an SSH source and a gNMI source on a device whose SSH is down, then
  // the gNMI source is still collected and only the SSH one is no-evidence.
  auto profile = parse_collector_profile(
      "platform: switch\n"
      "sources:\n"
      "  - category: interfaces\n"
      "    gnmi: {paths: [\"/interfaces/interface[name=*]/state\"]}\n"
      "  - category: routes\n"
      "    commands:\n"
      "      - {run: ip -j route show table main, parse: ip-route-v4}\n",
      "switch.yaml");
  ASSERT_TRUE(profile) << profile.error().message;
  ScriptedFetcher fetcher;
  fetcher.answers.emplace("/interfaces/interface[name=*]/state", std::vector{interfaces_reply()});
  RefusingConnector connector;
  ssh::ConnectionCache cache(connector);

  auto snapshot = collect_device(kDevice, *profile, cache, &fetcher);

  EXPECT_EQ(connector.connects, 1);
  EXPECT_FALSE(snapshot.reachable);
  EXPECT_EQ(snapshot.collected, (std::vector<std::string>{"interfaces"}));
  ASSERT_EQ(snapshot.missing.size(), 1u);
  EXPECT_EQ(snapshot.missing[0].category, "routes");
  EXPECT_EQ(snapshot.document["interfaces"]["lo"]["mtu"], 65536);
}

}  // namespace
}  // namespace fabgate::snapshot
