// The Debian package scripts/package builds, installed for real with dpkg -i on this machine
// (root): the installed fabgate runs, its man page is found, it snapshots a real sshd on
// loopback with the collector profile it ships, and dpkg --purge leaves nothing of it behind.
//
// The package is FABGATE_DEB when that names a .deb (a CI that built it already), else made
// here by scripts/package --from-build from this test build's own binaries (stripped), so the
// suite compiles nothing twice; the hardened release scripts/package builds by default, and its
// lintian check, are measured by running scripts/package (docs/install.md). It never
// touches an operator's install: when dpkg knows a package named fabgate that this test did not
// install, the test skips.

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/cmd/fabgate/e2e_fixture.h"

namespace fabgate {
namespace {

using testing::CommandOutput;
using testing::run_shell;
using testing::shell_quoted;

// Written before dpkg -i and removed after the purge: a package named fabgate found installed
// while this file exists (and records the same /usr/bin/fabgate) was left by a run of this test
// that was killed, and is removed; any other is an operator's and is left alone.
const std::string kMarker = "/var/tmp/fabgate-package-test.installed";

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// dpkg's status of package fabgate: "" when dpkg knows nothing of it.
std::string dpkg_status() {
  auto out = run_shell("dpkg-query -W -f='${Status}' fabgate 2>/dev/null");
  return out.exit_code == 0 ? trimmed(out.output) : "";
}

std::string usr_bin_fabgate_digest() {
  auto out = run_shell("md5sum /usr/bin/fabgate 2>/dev/null | cut -d' ' -f1");
  return trimmed(out.output);
}

// dpkg takes a lock; another package operation on the machine (an apt-get in a bootstrap) makes
// it fail at once, so a locked dpkg is retried for up to two minutes.
CommandOutput dpkg(const std::string& arguments) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  for (;;) {
    auto out = run_shell("dpkg " + arguments + " 2>&1");
    bool locked = out.output.find("lock") != std::string::npos && out.exit_code != 0;
    if (!locked || std::chrono::steady_clock::now() > give_up) return out;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

// Purges fabgate when this test installed it, on every way out of the test body.
struct PurgeOnExit {
  bool installed = false;
  ~PurgeOnExit() {
    if (!installed) return;
    dpkg("--purge fabgate");
    std::filesystem::remove(kMarker);
  }
};

class DebianPackage : public testing::FabgateEndToEnd {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it installs the package with dpkg -i";
    for (const char* tool : {"dpkg", "dpkg-deb", "dpkg-query"})
      if (run_shell(std::string("command -v ") + tool).exit_code != 0)
        GTEST_SKIP() << tool << " is not installed: not a Debian system";
    if (run_shell("command -v man").exit_code != 0)
      GTEST_SKIP() << "man is not installed (Debian package man-db): man -w cannot be checked";
    if (!dpkg_status().empty() && dpkg_status() != "unknown ok not-installed") {
      std::error_code ignored;
      if (std::filesystem::exists(kMarker) &&
          testing::read_file(kMarker) == usr_bin_fabgate_digest() + "\n") {
        // A killed run of this test left its package behind.
        dpkg("--purge fabgate");
        std::filesystem::remove(kMarker, ignored);
      } else {
        GTEST_SKIP() << "a package named fabgate is installed here (dpkg status '" << dpkg_status()
                     << "'); this test never removes an operator's install";
      }
    }
    testing::FabgateEndToEnd::SetUp();
  }

  // The package to test: $FABGATE_DEB, else scripts/package's output (its last line) made from
  // the binaries of this build (FABGATE_BINARY_DIR).
  std::string package() {
    if (const char* given = std::getenv("FABGATE_DEB"); given && *given) return given;
    auto out = run_shell(shell_quoted(std::string(FABGATE_SOURCE_DIR) + "/scripts/package") +
                         " --from-build " + shell_quoted(FABGATE_BINARY_DIR) +
                         " --no-lintian --out " + shell_quoted(debs_.path()) + " 2>&1");
    EXPECT_EQ(out.exit_code, 0) << out.output;
    std::string output = trimmed(out.output);
    return output.substr(output.rfind('\n') + 1);
  }

  testing::TempDir debs_{"fabgate-package-test"};
};

TEST_F(DebianPackage, InstallsRunsSnapshotsAndPurgesWithoutATrace) {
  // Given the .deb built from this tree, then dpkg -i installs it; /usr/bin/fabgate --version
  // names the package's version; man -w finds its pages; the installed fabgate snapshots a real
  // sshd with the linux profile it ships (nothing of it committed in the intent) and validates an
  // intent whose policies are the copies the package puts in /usr/share/fabgate; dpkg --purge
  // then leaves no file of the package and dpkg says it is not installed.
  const std::string deb = package();
  ASSERT_TRUE(std::filesystem::is_regular_file(deb)) << "no package at '" << deb << "'";
  const std::string version =
      trimmed(run_shell("dpkg-deb -f " + shell_quoted(deb) + " Version").output);
  ASSERT_FALSE(version.empty());
  // Nothing a test or the lab runs may come with the package.
  const std::string depends = run_shell("dpkg-deb -f " + shell_quoted(deb) + " Depends").output;
  for (const char* lab : {"frr", "prometheus", "etcd", "chromium", "openssh-server", "lldpd"})
    EXPECT_EQ(depends.find(lab), std::string::npos) << "Depends holds " << lab << ": " << depends;
  EXPECT_NE(depends.find("libgit2"), std::string::npos) << "dpkg-shlibdeps missing: " << depends;
  // No maintainer scripts: installing or removing it starts and stops nothing.
  auto control = run_shell("dpkg-deb --ctrl-tarfile " + shell_quoted(deb) + " | tar -t");
  for (const char* script : {"preinst", "postinst", "prerm", "postrm"})
    EXPECT_EQ(control.output.find(script), std::string::npos) << control.output;

  PurgeOnExit purge;
  purge.installed = true;
  auto install = dpkg("-i " + shell_quoted(deb));
  ASSERT_EQ(install.exit_code, 0) << install.output;
  testing::write_file(kMarker, usr_bin_fabgate_digest() + "\n");
  EXPECT_EQ(dpkg_status(), "install ok installed");
  std::vector<std::string> listed;
  {
    std::istringstream lines(run_shell("dpkg -L fabgate").output);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind("/", 0) == 0) listed.push_back(line);
  }
  const std::set<std::string> listed_set(listed.begin(), listed.end());
  for (const char* path :
       {"/usr/bin/fabgate", "/usr/bin/fabgate-probe", "/usr/bin/fabgate-gnmid",
        "/usr/share/man/man1/fabgate.1.gz", "/usr/share/man/man1/fabgate-probe.1.gz",
        "/usr/share/man/man8/fabgate-gnmid.8.gz", "/usr/share/man/man5/fabgate-intent.5.gz",
        "/usr/share/bash-completion/completions/fabgate",
        "/usr/share/zsh/vendor-completions/_fabgate", "/usr/share/doc/fabgate/copyright",
        "/usr/share/fabgate/schema/change.schema.json",
        "/usr/share/fabgate/policies/collectors/linux.yaml",
        "/usr/share/fabgate/policies/compare/fabric-default.yaml",
        "/usr/share/fabgate/policies/compat.yaml"}) {
    EXPECT_TRUE(listed_set.count(path)) << path << " is not in the package";
    EXPECT_TRUE(std::filesystem::exists(path)) << path << " is not on disk after dpkg -i";
  }

  auto shown = run_shell("/usr/bin/fabgate --version");
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(shown.output.rfind("fabgate " + version + " (commit ", 0), 0u) << shown.output;
  // -a: a scripts/install copy in /usr/local/share/man may come first on MANPATH.
  for (const char* page : {"fabgate", "fabgate-probe", "fabgate-gnmid", "fabgate-intent"}) {
    auto where = run_shell(std::string("man -aw ") + page);
    EXPECT_NE(where.output.find("/usr/share/man/"), std::string::npos)
        << "man -aw " << page << ": " << where.output;
  }
  auto completion = run_shell(
      "bash -c '. /usr/share/bash-completion/completions/fabgate && complete -p fabgate'");
  EXPECT_NE(completion.output.find("_fabgate"), std::string::npos) << completion.output;

  // The intent's policies: the compare rule sets and compat matrix the package installed.
  std::filesystem::create_directories(repo_.file("policies"));
  std::filesystem::copy("/usr/share/fabgate/policies/compare", repo_.file("policies/compare"));
  std::filesystem::copy_file("/usr/share/fabgate/policies/compat.yaml",
                             repo_.file("policies/compat.yaml"));
  commit_intent(testing::change("echo 'mtu 9100' >> {home}/d1.conf"));
  auto validate = repo_.run("/usr/bin/fabgate validate 2>&1");
  EXPECT_EQ(validate.exit_code, 0) << validate.output;

  auto snapshot = repo_.run("/usr/bin/fabgate snapshot d1 2>/dev/null");
  EXPECT_EQ(snapshot.exit_code, 0) << snapshot.output;
  auto document = nlohmann::json::parse(snapshot.output, nullptr, false);
  ASSERT_FALSE(document.is_discarded()) << snapshot.output;
  const std::string kernel = trimmed(run_shell("uname -r").output);
  EXPECT_EQ(document["devices"]["d1"]["identity"].value("kernel", ""), kernel) << document.dump(2);
  EXPECT_FALSE(document["devices"]["d1"]["interfaces"].empty()) << document.dump(2);

  purge.installed = false;
  auto removed = dpkg("--purge fabgate");
  ASSERT_EQ(removed.exit_code, 0) << removed.output;
  std::filesystem::remove(kMarker);
  const std::string after = dpkg_status();
  EXPECT_TRUE(after.empty() || after.find("not-installed") != std::string::npos)
      << "dpkg status after --purge: " << after;
  auto status = run_shell("dpkg -s fabgate 2>&1");
  EXPECT_NE(status.exit_code, 0);
  EXPECT_NE(status.output.find("not installed"), std::string::npos) << status.output;
  for (const std::string& path : listed) {
    // Folders such as /usr/bin are shared with other packages; the package's own are not.
    if (std::filesystem::is_directory(path) && path.find("fabgate") == std::string::npos) continue;
    EXPECT_FALSE(std::filesystem::exists(path)) << path << " is left after dpkg --purge";
  }
}

}  // namespace
}  // namespace fabgate
