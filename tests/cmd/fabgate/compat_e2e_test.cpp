// The compat gate of `fabgate apply` on what the real collector returns, through the built
// binary against a real sshd on loopback: identity counts only when a source collected it, and
// a matrix says something about every target's platform or the target is no-evidence. d1 and
// d2 are Linux "devices" (platform linux) served by the test's sshd.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::change;

class CompatEndToEnd : public testing::FabgateEndToEnd {
 protected:
  // Applies the fixture's harmless change with `files` (path -> text) added to the intent.
  testing::CommandOutput apply_with(const std::map<std::string, std::string>& files) {
    for (const auto& [path, text] : files) repo_.write(path, text);
    commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
    return fabgate("apply c");
  }
};

// The shipped linux profile without its identity source.
const std::string kProfileWithoutIdentity = R"(platform: linux
sources:
  - category: interfaces
    timeout: 10s
    commands:
      - run: ip -j -s link show
        parse: ip-link
      - run: ip -j addr show
        parse: ip-addr
)";

TEST_F(CompatEndToEnd, AProfileWithoutAnIdentitySourceRefusesTheChange) {
  // Given the intent's linux profile collects no identity, then the pre-change snapshot is
  // complete but holds no identity for d1: compat is no-evidence, the run exits 3 and d1 is
  // untouched. (The platform the profile names is not an identity the device returned.)
  auto out = apply_with({{"policies/collectors/linux.yaml", kProfileWithoutIdentity}});
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("d1: no identity collected"), std::string::npos) << out.output;
  EXPECT_TRUE(commands("step", "d1").empty());
  EXPECT_EQ(config("d1"), "mtu 9000\n");
  auto pre = read_json(bundle() / "snapshots" / "pre.json");
  EXPECT_EQ(pre["devices"]["d1"]["identity"], nlohmann::json::object()) << pre.dump(2);
}

TEST_F(CompatEndToEnd, APlatformTheMatrixDoesNotListRefusesTheChange) {
  // Given a matrix that lists frr only, then d1 (linux) is no-evidence naming its platform and
  // the matrix, the run exits 3 and d1 is untouched.
  auto out = apply_with(
      {{"policies/compat.yaml", "version: 1\nplatforms:\n  frr:\n    frr: \">=8.4 <11\"\n"}});
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("d1: platform linux is not in policies/compat.yaml"), std::string::npos)
      << out.output;
  EXPECT_TRUE(commands("step", "d1").empty());
  EXPECT_EQ(config("d1"), "mtu 9000\n");
}

TEST_F(CompatEndToEnd, APlatformTheMatrixListsWithItsCollectedKernelLetsTheChangeRun) {
  // Given a matrix that lists linux with any kernel, then compat passes on the kernel the
  // collector read from the host and the change runs (exit 0).
  auto out = apply_with(
      {{"policies/compat.yaml", "version: 1\nplatforms:\n  linux:\n    kernel: \"*\"\n"}});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(config("d1"), "mtu 9000\nmtu 9100\n");
}

}  // namespace
}  // namespace fabgate
