// report.html of real bundles in a real browser: the fabgate binary runs an accepted, a
// rolled-back and a rollback-failed change against a real sshd on loopback (the end-to-end
// fixture), `fabgate evidence show` summarises each bundle, and headless Chromium renders each
// page: its text names the verdict and each failing layer, and its screenshot is not blank.
// The screenshots are written to <build>/report-screenshots/ (docs/report.md shows them).
// Chromium runs hermetically: a fresh profile and HOME in a temporary folder, no account
// dotfiles, every network request sent to a dead proxy, killed after 60 s at most.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <optional>
#include <regex>

#include "adapters/core/time.h"
#include "tests/cmd/fabgate/e2e_fixture.h"
#include "tests/support/temp_dir.h"

namespace fabgate::testing {
namespace {

const std::string kChromium = "/usr/bin/chromium";
const std::string kScreenshots = FABGATE_BINARY_DIR "/report-screenshots";
const std::string kPngColours = FABGATE_SOURCE_DIR "/tests/cmd/fabgate/png_colours.py";

std::optional<std::string> chromium_unavailable() {
  if (::access(kChromium.c_str(), X_OK) != 0)
    return "chromium is not installed (Debian package chromium, " + kChromium + ")";
  if (run_shell("command -v python3").exit_code != 0)
    return "python3 is not installed (the screenshot check decodes the PNG with it)";
  return std::nullopt;
}

// One headless Chromium per call, with its own profile and HOME, never the invoking account's.
class Browser {
 public:
  CommandOutput run(const std::string& arguments) const {
    std::string home = profile_.path();
    return run_shell(
        "cd " + shell_quoted(home) + " && env -i PATH=/usr/bin:/bin HOME=" + shell_quoted(home) +
        " XDG_CONFIG_HOME=" + shell_quoted(home + "/config") +
        " XDG_CACHE_HOME=" + shell_quoted(home + "/cache") + " timeout -k 5 60 " + kChromium +
        " --headless --disable-gpu" + (::geteuid() == 0 ? " --no-sandbox" : "") +
        " --user-data-dir=" + shell_quoted(home + "/profile") +
        " --no-first-run --no-default-browser-check --disable-background-networking"
        " --disable-component-update --disable-sync --disable-extensions --disable-default-apps"
        " --hide-scrollbars --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' " +
        arguments + " 2>/dev/null");
  }
  // The page's DOM after rendering (scripts would have run; the page has none).
  std::string dom(const std::filesystem::path& page) const {
    auto out = run("--dump-dom " + shell_quoted("file://" + page.string()));
    EXPECT_EQ(out.exit_code, 0) << "chromium --dump-dom " << page;
    return out.output;
  }
  // Renders the page at 1280x2000 into `png`; returns what png_colours.py says of it.
  std::string screenshot(const std::filesystem::path& page, const std::string& png) const {
    std::filesystem::create_directories(std::filesystem::path(png).parent_path());
    std::filesystem::remove(png);
    auto out = run("--screenshot=" + shell_quoted(png) + " --window-size=1280,2000 " +
                   shell_quoted("file://" + page.string()));
    EXPECT_EQ(out.exit_code, 0) << "chromium --screenshot " << page;
    return run_shell("python3 " + shell_quoted(kPngColours) + " " + shell_quoted(png)).output;
  }

 private:
  TempDir profile_{"fabgate-chromium"};
};

// "WIDTHxHEIGHT COLOURS SHARE" from png_colours.py: a drawn page has many colours and no single
// colour covering nearly all of it.
void expect_not_blank(const std::string& colours, const std::string& what) {
  std::smatch match;
  ASSERT_TRUE(std::regex_search(colours, match, std::regex("(\\d+)x(\\d+) (\\d+) ([0-9.]+)")))
      << what << ": " << colours;
  EXPECT_EQ(match[1].str(), "1280") << what;
  EXPECT_GE(std::stoi(match[3].str()), 20) << what << ": " << colours;
  EXPECT_LT(std::stod(match[4].str()), 0.97) << what << ": " << colours;
}

// The page's text with the markup taken out (styles and SVG tooltips too), so checks read what
// a person reads. Written without std::regex, whose matcher recurses per character.
std::string visible_text(const std::string& dom) {
  std::string text;
  for (std::size_t i = 0; i < dom.size();) {
    if (dom.compare(i, 7, "<style>") == 0 || dom.compare(i, 7, "<title>") == 0) {
      auto end = dom.find(dom.compare(i, 7, "<style>") == 0 ? "</style>" : "</title>", i);
      i = end == std::string::npos ? dom.size() : end + 8;
    } else if (dom[i] == '<') {
      auto end = dom.find('>', i);
      i = end == std::string::npos ? dom.size() : end + 1;
      if (text.empty() || text.back() != ' ') text += ' ';
    } else if (std::isspace(static_cast<unsigned char>(dom[i]))) {
      if (text.empty() || text.back() != ' ') text += ' ';
      ++i;
    } else {
      text += dom[i++];
    }
  }
  return text;
}

// A layer's row of the recovery table, as text: "workload restored 02:00:00.650 (+0.65 s) ...".
std::string layer_row(const std::string& text, const std::string& layer) {
  auto table = text.find("layer status last seen good failed proven restored evidence");
  if (table == std::string::npos) return {};
  auto row = text.find(" " + layer + " ", table);
  return row == std::string::npos ? std::string() : text.substr(row + 1, 160);
}

class ReportBrowser : public FabgateEndToEnd {
 protected:
  // Checks what every bundle's page must be, without a browser: in the bundle, hashed in the
  // manifest, nothing to fetch; then what `fabgate evidence show` says of the bundle.
  std::filesystem::path check_page(const std::filesystem::path& dir) {
    auto page = dir / "report.html";
    EXPECT_TRUE(std::filesystem::exists(page)) << dir;
    auto m = read_json(dir / "manifest.json");
    EXPECT_TRUE(m["files"].contains("report.html")) << "report.html is hashed in the manifest";
    std::string html = read_file(page.string());
    for (const std::string fetch : {"src=", "@import", "url(h", "href=\"http", "<script", "<link"})
      EXPECT_EQ(html.find(fetch), std::string::npos) << fetch << " in " << page;
    auto show = fabgate("evidence show " + shell_quoted(dir.string()));
    last_show_ = show.output;
    EXPECT_EQ(show.exit_code, 0) << show.output;
    for (const std::string& part :
         std::vector<std::string>{"gates:", "layers (last seen good", "integrity: intact",
                                  "page:     " + std::filesystem::absolute(page).string()})
      EXPECT_NE(show.output.find(part), std::string::npos) << part << " in\n" << show.output;
    auto path = fabgate("evidence show --html " + shell_quoted(dir.string()));
    EXPECT_EQ(path.exit_code, 0) << path.output;
    EXPECT_EQ(path.output, std::filesystem::absolute(page).string() + "\n");
    return page;
  }

  Browser browser_;
  std::string last_show_;  // what `fabgate evidence show` printed for the last bundle checked
};

TEST_F(ReportBrowser, AcceptedRunPageSaysAcceptedAndEveryLayerHeldOrWithoutEvidence) {
  // Given an accepted change with a many-flow probe and a continuous probe during the change,
  // then the page says ACCEPTED, draws the continuous probe per flow, names no failing layer,
  // and renders to a screenshot that is not blank.
  const int port = free_probe_port();
  ASSERT_NE(port, 0);
  commit_intent(
      "id: c\ntitle: raise d1's MTU\ntargets: [d1]\n"
      "bounds: {max_targets: 1, step_timeout: 10s, deadline: 2m}\n"
      "steps:\n  - device: d1\n    run: cp {home}/d1.conf {home}/d1.bak && echo 'mtu 9100' >> "
      "{home}/d1.conf\n"
      "rollback:\n  - device: d1\n    run: cp {home}/d1.bak {home}/d1.conf\n"
      "acceptance:\n  settle: 0s\n"
      "  probes:\n    - {name: d2-to-d1, layer: forwarding, host: d2, kind: flows, target: d1, "
      "flows: 8, timeout: 10s}\n"
      "    - {name: config-healthy, layer: workload, host: d2, run: \"! grep -q broken "
      "{home}/d1.conf\", timeout: 10s}\n"
      "  during: {host: d1, target: d2, flows: 4, max_disruption: 2s}\n",
      "probes: {binary: " + kFabgateProbe + ", port: " + std::to_string(port) + "}\n");
  std::string inventory = read_file(repo_.file("inventory.yaml"));
  inventory = std::regex_replace(inventory, std::regex("(  d1:\\n)"),
                                 "$1    data_addresses: [127.0.0.1]\n");
  inventory = std::regex_replace(inventory, std::regex("(  d2:\\n)"),
                                 "$1    data_addresses: [127.0.0.2]\n");
  repo_.write("inventory.yaml", inventory);
  repo_.commit_all("data addresses for the probes");
  auto out = fabgate("apply c");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto page = check_page(evidence_of(out));
  if (auto why = chromium_unavailable()) GTEST_SKIP() << *why;
  std::string text = visible_text(browser_.dom(page));
  EXPECT_NE(text.find("ACCEPTED: the change is in place and verified (exit 0)"), std::string::npos)
      << text.substr(0, 2000);
  EXPECT_NE(text.find("Disruption during the change"), std::string::npos);
  EXPECT_EQ(text.find("NOT RESTORED"), std::string::npos);
  EXPECT_EQ(layer_row(text, "workload").rfind("workload held ", 0), 0u)
      << layer_row(text, "workload");
  expect_not_blank(browser_.screenshot(page, kScreenshots + "/report-accepted.png"), "accepted");
}

TEST_F(ReportBrowser, RolledBackRunPageNamesTheFailingLayerAndItsRestore) {
  // Given a change that breaks the service and is rolled back, then the page says ROLLED BACK
  // and that the workload layer failed and was proven restored.
  commit_intent(change("echo broken >> {home}/d1.conf"));
  auto out = fabgate("apply c");
  ASSERT_EQ(out.exit_code, 4) << out.output;
  auto page = check_page(evidence_of(out));
  if (auto why = chromium_unavailable()) GTEST_SKIP() << *why;
  std::string text = visible_text(browser_.dom(page));
  EXPECT_NE(text.find("ROLLED BACK: the change failed and was rolled back"), std::string::npos)
      << text.substr(0, 2000);
  EXPECT_NE(text.find("first failure: acceptance"), std::string::npos);
  std::string row = layer_row(text, "workload");
  EXPECT_TRUE(std::regex_search(row, std::regex("^workload restored [0-9:.]+ \\(\\+[0-9.]+ s\\) "
                                                "[0-9:.]+ \\(\\+[0-9.]+ s\\) fail: acceptance")))
      << row;
  expect_not_blank(browser_.screenshot(page, kScreenshots + "/report-rolled-back.png"),
                   "rolled back");
  // The terminal side of the same bundle, for the README's page-beside-terminal view.
  write_file(kScreenshots + "/evidence-show-rolled-back.txt", last_show_);
}

TEST_F(ReportBrowser, RollbackFailedRunPageNamesTheLayerThatIsNotRestored) {
  // Given a change whose rollback does not undo it, then the page says NOT RESTORED and names
  // the workload layer as failed and never restored.
  commit_intent(change("echo broken >> {home}/d1.conf", "true"));
  auto out = fabgate("apply c");
  ASSERT_EQ(out.exit_code, 5) << out.output;
  auto page = check_page(evidence_of(out));
  if (auto why = chromium_unavailable()) GTEST_SKIP() << *why;
  std::string text = visible_text(browser_.dom(page));
  EXPECT_NE(text.find("NOT RESTORED: the rollback failed or the baseline was not verified"),
            std::string::npos)
      << text.substr(0, 2000);
  std::string row = layer_row(text, "workload");
  EXPECT_EQ(row.rfind("workload NOT RESTORED ", 0), 0u) << row;
  EXPECT_NE(row.find(" never "), std::string::npos) << row;
  expect_not_blank(browser_.screenshot(page, kScreenshots + "/report-not-restored.png"),
                   "not restored");
}

TEST_F(ReportBrowser, CanarySecretsInStepsAndOutputNeverReachThePage) {
  // Given a step that carries a BGP password and a probe whose output carries secrets, then
  // neither report.html nor the text Chromium renders from it holds any of them.
  commit_intent(change("echo 'neighbor 10.0.0.1 password CanaryPw1' >> {home}/d1.conf",
                       "cp {home}/d1.bak {home}/d1.conf",
                       "echo 'secret 5 CanaryS2'; echo 'Authorization: Bearer CanaryTok3' >&2; "
                       "! grep -q password {home}/d1.conf"));
  auto out = fabgate("apply c");
  ASSERT_EQ(out.exit_code, 4) << out.output;
  auto page = check_page(evidence_of(out));
  std::string html = read_file(page.string());
  EXPECT_NE(html.find("password &lt;redacted&gt;"), std::string::npos)
      << "the step is shown, its secret replaced";
  for (const char* canary : {"CanaryPw1", "CanaryS2", "CanaryTok3"})
    EXPECT_EQ(html.find(canary), std::string::npos) << canary << " in report.html";
  if (auto why = chromium_unavailable()) GTEST_SKIP() << *why;
  std::string dom = browser_.dom(page);
  EXPECT_NE(dom.find("ROLLED BACK"), std::string::npos);
  for (const char* canary : {"CanaryPw1", "CanaryS2", "CanaryTok3"})
    EXPECT_EQ(dom.find(canary), std::string::npos) << canary << " in the rendered page";
}

TEST_F(ReportBrowser, PlanAndRehearseBundlesHaveThePageToo) {
  // Given a plan and a rehearsal of the same change, then both bundles have the page, an edited
  // page makes `evidence show` say TAMPERED, and the rehearsal's page says the rehearsal passed.
  commit_intent(change("echo 'mtu 9100' >> {home}/d1.conf"));
  auto plan = fabgate("plan c");
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  auto plan_bundle = evidence_of(plan);
  auto plan_page = read_file(check_page(plan_bundle).string());
  EXPECT_NE(plan_page.find("PLAN READY"), std::string::npos);
  // The page is evidence: an edited page makes the bundle TAMPERED (exit 3).
  write_file((plan_bundle / "report.html").string(), plan_page + "<p>all green</p>\n");
  auto tampered = fabgate("evidence show " + shell_quoted(plan_bundle.string()));
  EXPECT_EQ(tampered.exit_code, 3) << tampered.output;
  EXPECT_NE(tampered.output.find("integrity: TAMPERED"), std::string::npos) << tampered.output;
  auto rehearse = fabgate("rehearse c");
  ASSERT_EQ(rehearse.exit_code, 0) << rehearse.output;
  auto rehearse_page = read_file(check_page(evidence_of(rehearse)).string());
  EXPECT_NE(rehearse_page.find("REHEARSAL PASSED"), std::string::npos);
}

TEST_F(ReportBrowser, ShowRefusesAFolderThatIsNoBundle) {
  // Given a folder without manifest.json, then `evidence show` is invalid input naming it.
  auto out = fabgate("evidence show " + shell_quoted(repo_.file("changes")));
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("no manifest.json"), std::string::npos) << out.output;
}

TEST(ReportBrowserDiff, DiffHtmlWritesTheComparisonViewForTwoSnapshots) {
  // Given two snapshots where a BGP session went down and an MTU changed, then `fabgate diff
  // --html FILE` exits 3 as without --html, and FILE shows both as unexpected differences under
  // their rules, the passing checks folded; Chromium renders it.
  TempDir dir("fabgate-diff-html");
  auto snapshot = [](const std::string& state, int mtu) {
    return nlohmann::json{
        {"format", "fabgate.snapshot/1"},
        {"taken_at", format_utc(now_utc())},
        {"devices",
         {{"leaf1",
           {{"identity", {{"hostname", "leaf1"}}},
            {"sources",
             {{"bgp", {{"status", "ok"}, {"commands", nlohmann::json::array()}}},
              {"interfaces", {{"status", "ok"}, {"commands", nlohmann::json::array()}}}}},
            {"interfaces", {{"eth1", {{"oper", "up"}, {"admin", "up"}, {"mtu", mtu}}}}},
            {"bgp", {{"peers", {{"10.0.1.0", {{"state", state}, {"remote_as", 65000}}}}}}}}}}}}
        .dump();
  };
  write_file(dir.file("pre.json"), snapshot("Established", 9000));
  write_file(dir.file("post.json"), snapshot("Idle", 9100));
  auto out = run_shell(shell_quoted(kFabgate) + " diff " + shell_quoted(dir.file("pre.json")) +
                       " " + shell_quoted(dir.file("post.json")) + " --html " +
                       shell_quoted(dir.file("diff.html")) + " 2>&1");
  EXPECT_EQ(out.exit_code, 3) << out.output;
  EXPECT_NE(out.output.find("page: " + dir.file("diff.html")), std::string::npos) << out.output;
  std::string html = read_file(dir.file("diff.html"));
  EXPECT_NE(html.find("<h3>Unexpected differences (2)</h3>"), std::string::npos) << html;
  EXPECT_NE(html.find("fabric-default/bgp-peer-state"), std::string::npos);
  EXPECT_NE(html.find("fabric-default/interface-mtu"), std::string::npos);
  EXPECT_NE(html.find("<details><summary>Held ("), std::string::npos);
  if (auto why = chromium_unavailable()) GTEST_SKIP() << *why;
  Browser browser;
  std::string text = visible_text(browser.dom(dir.file("diff.html")));
  EXPECT_NE(text.find("Unexpected differences (2)"), std::string::npos) << text;
}

}  // namespace
}  // namespace fabgate::testing
