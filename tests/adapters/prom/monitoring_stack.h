#pragma once

// A real monitoring stack on 127.0.0.1 for tests: the Debian prometheus-node-exporter (uname,
// netclass-free: only the collectors named below), prometheus scraping it every second with
// alert rules evaluated every second, and prometheus-alertmanager receiving the alerts. Each
// runs from generated configuration in a temporary folder, on free ports, and dies with the
// test (tests/support/process.h). The scrape target carries the label device="<device>" (as
// a relabelling would in production), so `device="{{name}}"` selects its series. The node
// exporter's textfile collector reads `textfile_dir()`, so a test (or a change's step over SSH)
// can make a metric move by writing a file: `fabgate_lab_link_up 0` in lab.prom makes the
// FabgateLinkDown rule fire for that device.
//
// With Tls::on, Prometheus serves HTTPS itself (its web config; a CA and a server certificate
// for 127.0.0.1 are made with openssl), and Alertmanager is reached through
// bearer_tls_proxy.py, which serves HTTPS with the same certificate and refuses every request
// without `Authorization: Bearer <token()>` (Prometheus and Alertmanager check only basic
// auth, so a real bearer check needs the proxy). ca_file() is the CA to trust.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "adapters/prom/alertmanager_client.h"
#include "adapters/prom/prometheus_client.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_port.h"

namespace fabgate::testing {

// A loopback port for a child to bind (tests/support/test_port.h).
inline int free_loopback_port() { return reserve_test_port(); }

// Polls `done` every 100 ms until it is true or `limit` passed.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

class MonitoringStack {
 public:
  enum class Tls { off, on };
  static constexpr const char* kPrometheus = "/usr/bin/prometheus";
  static constexpr const char* kAlertmanager = "/usr/bin/prometheus-alertmanager";
  static constexpr const char* kNodeExporter = "/usr/bin/prometheus-node-exporter";

  // Why the stack cannot run here, or empty when it can.
  static std::string missing() {
    for (const char* binary : {kPrometheus, kAlertmanager, kNodeExporter})
      if (!std::filesystem::exists(binary))
        return std::string(binary) + " is not installed (scripts/bootstrap --tests installs it)";
    return {};
  }

  // `extra_rules`: more alerting rules (YAML list items, indented 6) next to FabgateLinkDown;
  // items indented 2 (`  - name: ...`) are further rule groups. `extra_scrapes`: more scrape
  // jobs (YAML list items, indented 2); {{exporter}} stands for the exporter's address.
  explicit MonitoringStack(std::string device = "leaf1", const std::string& extra_rules = {},
                           Tls tls = Tls::off, std::string extra_scrapes = {})
      : device_(std::move(device)), tls_(tls) {
    exporter_port_ = free_loopback_port();
    prometheus_port_ = free_loopback_port();
    alertmanager_port_ = free_loopback_port();
    std::string web_config;
    if (tls_ == Tls::on) {
      proxy_port_ = free_loopback_port();
      make_certificates();
      write_file(dir_.file("web.yml"),
                 "tls_server_config:\n  cert_file: " + dir_.file("server.pem") +
                     "\n  key_file: " + dir_.file("server.key") + "\n");
      web_config = " --web.config.file=" + dir_.file("web.yml");
    }
    std::filesystem::create_directories(dir_.file("textfile"));
    set_link(true);
    write_file(dir_.file("rules.yml"),
               "groups:\n"
               "  - name: fabgate-test\n"
               "    interval: 1s\n"
               "    rules:\n"
               "      - alert: FabgateLinkDown\n"
               "        expr: fabgate_lab_link_up == 0\n"
               "        labels: {severity: critical}\n" +
                   extra_rules);
    for (std::size_t at; (at = extra_scrapes.find("{{exporter}}")) != std::string::npos;)
      extra_scrapes.replace(at, 12, exporter_address());
    extra_scrapes_ = std::move(extra_scrapes);
    write_prometheus_config(true);
    write_file(
        dir_.file("alertmanager.yml"),
        "route: {receiver: nobody, group_wait: 0s, group_interval: 1s, repeat_interval: 1h}\n"
        "receivers: [{name: nobody}]\n");
    start_exporter();
    web_config_ = web_config;
    start_prometheus();
    alertmanager_ = ChildProcess(
        {"/bin/sh", "-c",
         std::string("exec ") + kAlertmanager + " --config.file=" + dir_.file("alertmanager.yml") +
             " --storage.path=" + dir_.file("am") +
             " --web.listen-address=127.0.0.1:" + std::to_string(alertmanager_port_) +
             " --cluster.listen-address= >" + dir_.file("alertmanager.log") + " 2>&1"});
    if (tls_ == Tls::on)
      proxy_ = ChildProcess(
          {"/bin/sh", "-c",
           "exec env FABGATE_TEST_AM_TOKEN=" + token() +
               " python3 " FABGATE_SOURCE_DIR "/tests/adapters/prom/bearer_tls_proxy.py " +
               std::to_string(proxy_port_) + " " + std::to_string(alertmanager_port_) + " " +
               dir_.file("server.pem") + " " + dir_.file("server.key") + " FABGATE_TEST_AM_TOKEN " +
               dir_.file("refusals") + " >" + dir_.file("proxy.log") + " 2>&1"});
  }

  // Waits until both daemons answer /-/ready and the exporter's first scrape is in; false
  // after the deadline (the log tails say why).
  bool wait_ready(std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    auto prometheus = prometheus_client();
    auto alertmanager = alertmanager_client();
    return eventually(
        [&] {
          if (!prometheus.ready().ok() || !alertmanager.ready().ok()) return false;
          auto up = prometheus.query("up{job=\"node\"} == 1", now_utc());
          return up.ok() && !up->series.empty();
        },
        limit);
  }

  std::string logs() const {
    std::string out;
    for (const char* name : {"prometheus.log", "alertmanager.log", "proxy.log"})
      if (file_exists(dir_.file(name))) {
        std::string text = read_file(dir_.file(name));
        out += std::string("--- ") + name + "\n" +
               (text.size() > 3000 ? text.substr(text.size() - 3000) : text);
      }
    return out;
  }

  void set_link(bool up) {
    std::string temporary = dir_.file("textfile/.lab.tmp");
    write_file(temporary, std::string("fabgate_lab_link_up ") + (up ? "1" : "0") + "\n");
    std::filesystem::rename(temporary, dir_.file("textfile/lab.prom"));
  }

  // Stops Prometheus (SIGTERM: it writes no staleness marker then) and starts it again on the
  // same storage and port, scraping the node job only when `scrape_node`: a Prometheus that
  // stopped scraping a target whose last samples instant queries still return.
  void restart_prometheus(bool scrape_node) {
    prometheus_ = ChildProcess();
    write_prometheus_config(scrape_node);
    start_prometheus();
  }

  void stop_exporter() { exporter_ = ChildProcess(); }
  // A hung exporter (SIGSTOP): its scrapes time out (up == 0) until resume_exporter. Safe from
  // any thread, unlike restarting it: a child dies with the thread that started it.
  void pause_exporter() { ::kill(exporter_.pid(), SIGSTOP); }
  void resume_exporter() { ::kill(exporter_.pid(), SIGCONT); }
  void start_exporter() {
    exporter_ =
        ChildProcess({kNodeExporter, "--web.listen-address=" + exporter_address(),
                      "--collector.disable-defaults", "--collector.uname", "--collector.textfile",
                      "--collector.textfile.directory=" + dir_.file("textfile")});
  }

  std::string exporter_address() const { return "127.0.0.1:" + std::to_string(exporter_port_); }
  std::string prometheus_url() const {
    return std::string(tls_ == Tls::on ? "https" : "http") +
           "://127.0.0.1:" + std::to_string(prometheus_port_);
  }
  std::string alertmanager_url() const {
    return tls_ == Tls::on ? "https://127.0.0.1:" + std::to_string(proxy_port_)
                           : "http://127.0.0.1:" + std::to_string(alertmanager_port_);
  }
  // With Tls::on: the CA that signed the servers' certificate, and the bearer token the proxy
  // in front of Alertmanager requires (random per stack).
  std::string ca_file() const { return tls_ == Tls::on ? dir_.file("ca.pem") : ""; }
  const std::string& token() const { return token_; }
  // How many requests the proxy refused for a missing or wrong token.
  std::size_t refusals() const {
    if (!file_exists(dir_.file("refusals"))) return 0;
    std::string text = read_file(dir_.file("refusals"));
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  std::string textfile_dir() const { return dir_.file("textfile"); }
  prom::PrometheusClient prometheus_client() const {
    return prom::PrometheusClient(
        prom::HttpEndpoint{prometheus_url(), ca_file(), "", Duration{3'000}});
  }
  prom::AlertmanagerClient alertmanager_client() const {
    return prom::AlertmanagerClient(
        prom::HttpEndpoint{alertmanager_url(), ca_file(), token(), Duration{3'000}});
  }

 private:
  // A CA, and a server certificate it signs for IP 127.0.0.1 (one day, EC P-256).
  void make_certificates() {
    write_file(dir_.file("server.ext"),
               "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    std::string cd = "cd " + dir_.path() + " && ";
    std::string quiet = " >/dev/null 2>&1";
    for (const char* command :
         {"openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1"
          " -keyout ca.key -out ca.pem -subj /CN=fabgate-test-ca"
          " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign",
          "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key"
          " -out server.csr -subj /CN=127.0.0.1",
          "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
          " -extfile server.ext -out server.pem"})
      if (std::system((cd + command + quiet).c_str()) != 0) certificate_error_ = command;
  }

  void write_prometheus_config(bool scrape_node) {
    write_file(dir_.file("prometheus.yml"),
               "global: {scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 900ms}\n"
               "rule_files: [" +
                   dir_.file("rules.yml") +
                   "]\n"
                   "alerting:\n"
                   "  alertmanagers:\n"
                   "    - static_configs: [{targets: ['127.0.0.1:" +
                   std::to_string(alertmanager_port_) +
                   "']}]\n"
                   "scrape_configs:\n" +
                   (scrape_node ? "  - job_name: node\n"
                                  "    static_configs:\n"
                                  "      - targets: ['" +
                                      exporter_address() +
                                      "']\n"
                                      "        labels: {device: " +
                                      device_ + "}\n"
                                : std::string()) +
                   extra_scrapes_ + (scrape_node || !extra_scrapes_.empty() ? "" : "  []\n"));
  }

  void start_prometheus() {
    prometheus_ = ChildProcess(
        {"/bin/sh", "-c",
         std::string("exec ") + kPrometheus + " --config.file=" + dir_.file("prometheus.yml") +
             " --storage.tsdb.path=" + dir_.file("tsdb") +
             " --web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_) + web_config_ +
             " >>" + dir_.file("prometheus.log") + " 2>&1"});
  }

  std::string device_;
  std::string extra_scrapes_, web_config_;
  Tls tls_ = Tls::off;
  TempDir dir_{"fabgate-monitoring"};
  int exporter_port_ = 0, prometheus_port_ = 0, alertmanager_port_ = 0, proxy_port_ = 0;
  std::string token_ = "CanaryBearer" + std::to_string(::getpid()) + "x" +
                       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::string certificate_error_;
  ChildProcess exporter_, prometheus_, alertmanager_, proxy_;
};

}  // namespace fabgate::testing
