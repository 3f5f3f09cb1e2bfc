// One vtysh invocation for a device's FRR show commands: which commands qualify, the
// invocation, and splitting its echoed output back into each command's output.

#include "gates/snapshot/vtysh_together.h"

#include <gtest/gtest.h>

namespace fabgate::snapshot {
namespace {

TEST(VtyshTogether, OnlyAPlainSingleQuotedShowCommandQualifies) {
  // Given profile commands, then only `vtysh -c 'X'` exactly gives X; anything else (a second
  // -c, double quotes, a pipe after it, a quote inside) is sent as written.
  EXPECT_EQ(vtysh_show_command("vtysh -c 'show bgp summary json'"), "show bgp summary json");
  EXPECT_FALSE(vtysh_show_command("vtysh -c \"show bgp summary json\""));
  EXPECT_FALSE(vtysh_show_command("vtysh -c 'show version' | head -1"));
  EXPECT_FALSE(vtysh_show_command("vtysh -c 'show version' -c 'show bfd peers'"));
  EXPECT_FALSE(vtysh_show_command("vtysh -c ''"));
  EXPECT_FALSE(vtysh_show_command("sudo vtysh -c 'show version'"));
  EXPECT_FALSE(vtysh_show_command("vtysh -c 'show x\nrm -rf /'"));
}

TEST(VtyshTogether, TheInvocationEchoesEachCommandInOrder) {
  EXPECT_EQ(vtysh_together_invocation({"show version", "show bfd peers json"}),
            "vtysh -E -c 'show version' -c 'show bfd peers json'");
}

TEST(VtyshTogether, EchoedOutputIsSplitIntoEachCommandsOwnOutput) {
  // Given vtysh -E output for three commands, the second of which printed nothing (a spine's
  // `show evpn vni json`), then each part is that command's output byte for byte.
  const std::string output =
      "spine1# show version\n"
      "FRRouting 8.4.4 (spine1).\n"
      "spine1# show evpn vni json\n"
      "spine1# show bfd peers json\n"
      "[\n  {\"peer\":\"10.0.1.3\"}\n]\n";
  auto parts =
      split_vtysh_together(output, {"show version", "show evpn vni json", "show bfd peers json"});
  ASSERT_TRUE(parts.has_value());
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0], "FRRouting 8.4.4 (spine1).\n");
  EXPECT_EQ((*parts)[1], "");
  EXPECT_EQ((*parts)[2], "[\n  {\"peer\":\"10.0.1.3\"}\n]\n");
}

TEST(VtyshTogether, ALineThatOnlyEndsLikeAnEchoStaysInItsCommandsOutput) {
  // Given a running configuration with an interface description that ends like the next
  // command's echo, then it is not taken for the echo: only a whole line equal to the prompt
  // and the command splits, and the description stays in the configuration.
  const std::string output =
      "leaf1# show running-config\n"
      "interface to-spine1\n"
      " description uplink leaf1# show bgp summary json\n"
      "exit\n"
      "leaf1# show bgp summary json\n"
      "{}\n";
  auto parts = split_vtysh_together(output, {"show running-config", "show bgp summary json"});
  ASSERT_TRUE(parts.has_value());
  EXPECT_NE((*parts)[0].find("description uplink leaf1# show bgp summary json"),
            std::string::npos);
  EXPECT_EQ((*parts)[1], "{}\n");
}

TEST(VtyshTogether, OutputMissingAnEchoCannotBeSplit) {
  // Given vtysh that stopped at a failing command (no echo of the commands after it), or
  // output that does not start with the first command's echo after a prompt, then nothing is
  // split: each command is then run on its own.
  EXPECT_FALSE(split_vtysh_together(
      "spine1# show version\nFRRouting 8.4.4\nspine1# show bgp nonsense json\n"
      "% Unknown command: show bgp nonsense json\n",
      {"show version", "show bgp nonsense json", "show bgp summary json"}));
  EXPECT_FALSE(split_vtysh_together("FRRouting 8.4.4\nspine1# show bfd peers json\n[]\n",
                                    {"show version", "show bfd peers json"}));
  EXPECT_FALSE(split_vtysh_together("", {"show version"}));
  EXPECT_FALSE(split_vtysh_together("show version\nx\n", {"show version"}));
  // An echo whose prompt differs from the first one's is not an echo of this invocation.
  EXPECT_FALSE(split_vtysh_together("leaf1# show version\nx\nspine1# show bfd peers json\n[]\n",
                                    {"show version", "show bfd peers json"}));
}

}  // namespace
}  // namespace fabgate::snapshot
