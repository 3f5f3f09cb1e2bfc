// The console every command prints through: what reaches stdout and stderr holds no secret,
// and the --json document stays one parsable JSON document whatever it carries.

#include "gates/app/console.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "gates/app/intent_loading.h"

namespace fabgate::app {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  return text;
}

TEST(Console, JsonDocumentIsRedactedValueByValueAndParses) {
  // Given a --json document whose values end in secrets followed by a quote, a comma and a
  // brace, and a configured secret added after the console was made, then stdout is one JSON
  // document that parses, holds no secret and keeps every other character.
  File out(std::tmpfile()), err(std::tmpfile());
  Redactor redactor;
  Console console(out.get(), err.get(), true, redactor);
  console.add_secret("Cn&ry\"Va\\l<ue");
  console.json({{"first_disproven", "vtysh -c 'neighbor 10.0.0.1 password CanaryC1'"},
                {"details", {"secret CanaryC2,", "{password: CanaryC3}"}},
                {"device_state", "key Cn&ry\"Va\\l<ue\n\a\xff"}});
  std::string text = contents(out.get());
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  for (const char* canary : {"CanaryC1", "CanaryC2", "CanaryC3", "Cn&ry"})
    EXPECT_EQ(text.find(canary), std::string::npos) << canary << " in " << text;
  EXPECT_EQ(parsed["first_disproven"], "vtysh -c 'neighbor 10.0.0.1 password <redacted>'");
  EXPECT_EQ(parsed["details"], nlohmann::json({"secret <redacted>,", "{password: <redacted>}"}));
  EXPECT_EQ(parsed["device_state"].get<std::string>().substr(0, 15), "key <redacted>\n");
  EXPECT_EQ(contents(err.get()), "");
}

TEST(Console, ALabOnlyPlaintextCredentialsSettingIsWarnedAboutPerDevice) {
  // Given an inventory where leaf1's gNMI endpoint allows credentials over plaintext (the lab
  // setting) and spine1's uses TLS, then one warning names leaf1, the setting and the
  // variables whose values go in clear text, and nothing names spine1.
  File out(std::tmpfile()), err(std::tmpfile());
  Redactor redactor;
  Console console(out.get(), err.get(), false, redactor);
  intent::IntentRepository repository;
  intent::Device leaf1, spine1;
  leaf1.name = "leaf1";
  leaf1.gnmi = intent::GnmiEndpoint{};
  leaf1.gnmi->tls = false;
  leaf1.gnmi->credentials_env = "LAB_GNMI";
  leaf1.gnmi->lab_insecure_plaintext_credentials = true;
  spine1.name = "spine1";
  spine1.gnmi = intent::GnmiEndpoint{};
  spine1.gnmi->credentials_env = "LAB_GNMI";
  repository.inventory.devices = {spine1, leaf1};
  warn_lab_only_settings(repository, console);
  EXPECT_EQ(contents(err.get()),
            "fabgate: warning: device 'leaf1' gnmi: lab_insecure_plaintext_credentials: the "
            "login from LAB_GNMI_USERNAME and LAB_GNMI_PASSWORD goes to the device in clear "
            "text (lab only)\n");
  EXPECT_EQ(contents(out.get()), "");
}

TEST(Console, SharesItsRedactorWithWhoeverMadeIt) {
  // Given a secret added through the console (as run_redactor does once the intent is read),
  // then the redactor main prints errors with knows it too, and so does the stderr console
  // `fabgate snapshot` prints its table on.
  File out(std::tmpfile()), err(std::tmpfile());
  Redactor redactor;
  Console console(out.get(), err.get(), false, redactor);
  console.add_secret("Zq8kTokenValue");
  EXPECT_EQ(redactor.redact("error: Zq8kTokenValue"), "error: <redacted>");
  Console table = console.on_stderr();
  table.line("row Zq8kTokenValue");
  console.warn("warned Zq8kTokenValue");
  EXPECT_EQ(contents(err.get()), "row <redacted>\nfabgate: warning: warned <redacted>\n");
  EXPECT_EQ(contents(out.get()), "");
}

}  // namespace
}  // namespace fabgate::app
