// Runs the built `fabgate inventory import` as a user starting from containerlab or Ansible
// would: the written inventory.yaml passes `fabgate validate` and the JSON Schema, an existing
// file is never overwritten without --force, and bad input names file:line with exit 2.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "tests/support/git_repo.h"

namespace fabgate {
namespace {

using testing::GitRepo;
using testing::run_shell;
using testing::shell_quoted;

const std::string kFabgate = FABGATE_BINARY_DIR "/cmd/fabgate/fabgate";
const std::string kCheckSchema = FABGATE_SOURCE_DIR "/scripts/check-intent-schema";

constexpr const char* kTopology = R"(name: pod1
mgmt:
  network: pod1-mgmt
  ipv4-subnet: 172.20.20.0/24
topology:
  defaults:
    kind: linux
  kinds:
    linux:
      image: quay.io/frrouting/frr:9.1.0
  nodes:
    spine1:
      group: spine
      mgmt-ipv4: 172.20.20.11
    spine2:
      kind: nokia_srlinux
      image: ghcr.io/nokia/srlinux:23.10.1
      group: spine
      mgmt-ipv4: 172.20.20.12
    leaf1:
      mgmt-ipv4: 172.20.20.21
    leaf2:
      kind: arista_ceos
      image: ceos:4.31.2F
    gpu1:
      image: ghcr.io/hellt/network-multitool
      labels: {fabgate-role: gpu-host}
    br-clients:
      kind: bridge
  links:
    - endpoints: ["spine1:eth1", "leaf1:eth1"]
    - endpoints: ["leaf1:eth3", "br-clients:eth1"]
)";

constexpr const char* kAnsible = R"([spines]
spine[1:2] ansible_network_os=frr.frr.frr

[leaves]
leaf01 ansible_host=10.10.0.21
leaf02:2222 ansible_host=10.10.0.22

[leaves:vars]
ansible_network_os=arista.eos.eos

[fabric:children]
spines
leaves
)";

// The smallest intent that `fabgate validate` reads: settings and the imported inventory.
constexpr const char* kSettings = "version: 1\ninventory: inventory.yaml\n";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct ImportRepo {
  GitRepo repo;
  testing::CommandOutput fabgate(const std::string& arguments) {
    return repo.run(shell_quoted(kFabgate) + " " + arguments + " </dev/null");
  }
  // Commits the intent folder and checks it as a user would.
  void expect_valid(const std::string& intent, const std::string& devices) {
    repo.write(intent + "/fabgate.yaml", kSettings);
    repo.commit_all("imported inventory");
    auto valid = fabgate("validate --repo " + intent);
    EXPECT_EQ(valid.exit_code, 0) << valid.output
                                  << read_file(repo.file(intent + "/inventory.yaml"));
    EXPECT_NE(valid.output.find("devices   " + devices), std::string::npos) << valid.output;
    if (run_shell("python3 -c 'import jsonschema, yaml'").exit_code != 0) {
      ADD_FAILURE() << "python3-jsonschema or python3-yaml missing (scripts/bootstrap --tests)";
      return;
    }
    auto schema = repo.run(shell_quoted(kCheckSchema) + " " + intent);
    EXPECT_EQ(schema.exit_code, 0) << schema.output;
  }
};

TEST(InventoryImport, ContainerlabTopologyBecomesAValidInventory) {
  // Given a containerlab topology with FRR, SR Linux, cEOS and Linux nodes and a bridge, then
  // the written inventory has the five devices with their platforms and addresses, says the
  // bridge was not imported, and passes validate and the JSON Schema.
  ImportRepo lab;
  lab.repo.write("pod1.clab.yml", kTopology);
  auto out =
      lab.fabgate("inventory import --from containerlab pod1.clab.yml --out intent/inventory.yaml");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("wrote intent/inventory.yaml: 5 devices (1 eos, 2 frr, 1 linux, 1 "
                            "srlinux) from pod1.clab.yml"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("not imported: br-clients: kind 'bridge'"), std::string::npos);
  std::string written = read_file(lab.repo.file("intent/inventory.yaml"));
  EXPECT_NE(written.find("  spine2:\n    platform: srlinux\n    role: spine\n"
                         "    ssh: {host: 172.20.20.12}\n"),
            std::string::npos)
      << written;
  EXPECT_NE(written.find("  leaf2:\n    platform: eos\n    role: leaf\n"
                         "    ssh: {host: clab-pod1-leaf2}\n"),
            std::string::npos)
      << written;
  lab.expect_valid("intent", "5");
}

TEST(InventoryImport, AnsibleInventoryBecomesAValidInventoryAndIsNotOverwritten) {
  // Given an INI inventory, then the import writes four devices; a second import without
  // --force is refused with exit 2 and leaves the file as it was; --force replaces it.
  ImportRepo lab;
  lab.repo.write("hosts.ini", kAnsible);
  auto first = lab.fabgate("inventory import --from ansible hosts.ini --out net/inventory.yaml");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  lab.expect_valid("net", "4");

  lab.repo.write("net/inventory.yaml", "# edited by hand\n");
  auto again = lab.fabgate("inventory import --from ansible hosts.ini --out net/inventory.yaml");
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_NE(again.output.find("net/inventory.yaml exists"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
  EXPECT_EQ(read_file(lab.repo.file("net/inventory.yaml")), "# edited by hand\n");

  auto forced = lab.fabgate(
      "--json inventory import --from ansible hosts.ini --out net/inventory.yaml --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  auto document = nlohmann::json::parse(forced.output, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << forced.output;
  ASSERT_EQ(document["devices"].size(), 4u);
  EXPECT_EQ(document["devices"][3]["port"], 2222);
  EXPECT_EQ(document["devices"][3]["from"], "hosts.ini:6:1");
  EXPECT_NE(read_file(lab.repo.file("net/inventory.yaml")).find("leaf02:"), std::string::npos);
}

TEST(InventoryImport, BadInputNamesFileAndLineAndWritesNothing) {
  // Given an inventory with a host line without '=' and an unknown source type, then exit 2
  // with file:line, and no inventory.yaml.
  ImportRepo lab;
  lab.repo.write("hosts", "[leaves]\nleaf1 ansible_host=10.0.0.1\nleaf3 ansible_host\n");
  auto bad = lab.fabgate("inventory import --from ansible hosts");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("hosts:3:1: error: host leaf3: expected KEY=VALUE, got 'ansible_host'"),
            std::string::npos)
      << bad.output;
  EXPECT_NE(run_shell("test -e " + shell_quoted(lab.repo.file("inventory.yaml"))).exit_code, 0);

  auto unknown = lab.fabgate("inventory import --from netbox hosts");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  auto missing = lab.fabgate("inventory import --from containerlab nowhere.clab.yml");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("nowhere.clab.yml: no such file"), std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace fabgate
