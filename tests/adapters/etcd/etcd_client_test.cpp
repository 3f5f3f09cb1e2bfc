// The etcd adapter against the real Debian etcd 3.4 (single members and a three-member cluster on
// 127.0.0.1 free ports, data in a temp folder), a listening socket that never answers, and a
// loopback HTTP server that answers JSON of the wrong types.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "adapters/etcd/etcd_client.h"
#include "tests/adapters/etcd/etcd_cluster.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fabgate::etcd {
namespace {

using namespace fabgate::etcd::testing;

using namespace std::chrono_literals;
using Kind = EtcdFailure::Kind;

#define REQUIRE_ETCD()                 \
  if (!std::filesystem::exists(kEtcd)) \
  GTEST_SKIP() << kEtcd << " is missing: scripts/bootstrap --tests installs etcd-server"

class EtcdSingle : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ETCD();
    cluster_ = std::make_unique<Cluster>(1);
    ASSERT_TRUE(cluster_->ready()) << "etcd did not start: " << cluster_->log(0);
  }
  std::unique_ptr<Cluster> cluster_;
};

// Given a key with '/' and bytes that are not UTF-8, when it is put and read back: the same
// bytes come back, with the revisions etcd gave the write.
TEST_F(EtcdSingle, PutThenGetRoundTripsBytesWithRevisions) {
  auto client = open_client(cluster_->endpoints());
  std::string key = std::string("fleet/budget/\xff\x00\x01", 16);
  std::string value = std::string("\x80\xfe\x00zz\n", 6);
  auto put = client.put(key, value);
  ASSERT_TRUE(put.ok()) << put.error().message;
  auto got = client.get(key);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->kvs.size(), 1u);
  EXPECT_EQ(got->kvs[0].key, key);
  EXPECT_EQ(got->kvs[0].value, value);
  EXPECT_EQ(got->kvs[0].create_revision, put->revision);
  EXPECT_EQ(got->kvs[0].mod_revision, put->revision);
  EXPECT_EQ(got->kvs[0].version, 1);
  EXPECT_EQ(got->kvs[0].lease, 0);
  EXPECT_GE(got->revision, put->revision);

  ASSERT_TRUE(client.put("fleet/budget/a", "1").ok());
  ASSERT_TRUE(client.put("fleet/other", "2").ok());
  auto prefix = client.get_prefix("fleet/budget/");
  ASSERT_TRUE(prefix.ok()) << prefix.error().message;
  ASSERT_EQ(prefix->kvs.size(), 2u);
  EXPECT_EQ(prefix->kvs[0].key, "fleet/budget/a");
  EXPECT_EQ(prefix->kvs[1].key, key);

  auto gone = client.del(key);
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_EQ(gone->deleted, 1);
  auto missing = client.get(key);
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_TRUE(missing->kvs.empty());
}

// Given two writers creating the same keys only if none exists: the first succeeds, the second
// does not, and the first's values stay.
TEST_F(EtcdSingle, CreateIfAbsentSucceedsOnceAndKeepsTheFirstValue) {
  auto client = open_client(cluster_->endpoints());
  std::vector<Compare> none = {Compare::absent("lock/a"), Compare::absent("lock/b")};
  auto first = client.txn(none, {TxnOp::put("lock/a", "first"), TxnOp::put("lock/b", "first")});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->succeeded);
  auto second = client.txn(none, {TxnOp::put("lock/a", "second"), TxnOp::put("lock/b", "second")},
                           {TxnOp::get("lock/a")});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_FALSE(second->succeeded);
  EXPECT_EQ(second->revision, first->revision) << "a failed transaction wrote nothing";
  ASSERT_EQ(second->reads.size(), 1u);
  ASSERT_EQ(second->reads[0].kvs.size(), 1u);
  EXPECT_EQ(second->reads[0].kvs[0].value, "first");
  auto b = client.get("lock/b");
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->kvs.size(), 1u);
  EXPECT_EQ(b->kvs[0].value, "first");
}

// Given keys under two prefixes and one outside, when one read-only transaction reads both
// prefixes and a missing one: each read holds exactly its prefix's keys, sorted, at the same
// revision, and nothing was written.
TEST_F(EtcdSingle, PrefixReadsInOneTransactionAreOneConsistentView) {
  auto client = open_client(cluster_->endpoints());
  ASSERT_TRUE(client.put("p/queue/b", "2").ok());
  ASSERT_TRUE(client.put("p/queue/a", "1").ok());
  ASSERT_TRUE(client.put("p/service/out/spine1", "x").ok());
  auto last = client.put("p/queuex", "not under p/queue/");
  ASSERT_TRUE(last.ok()) << last.error().message;
  auto view = client.txn({}, {TxnOp::get_prefix("p/queue/"), TxnOp::get_prefix("p/service/"),
                              TxnOp::get_prefix("p/budgets/")});
  ASSERT_TRUE(view.ok()) << view.error().message;
  EXPECT_TRUE(view->succeeded);
  EXPECT_EQ(view->revision, last->revision) << "a read-only transaction wrote something";
  ASSERT_EQ(view->reads.size(), 3u);
  ASSERT_EQ(view->reads[0].kvs.size(), 2u);
  EXPECT_EQ(view->reads[0].kvs[0].key, "p/queue/a");
  EXPECT_EQ(view->reads[0].kvs[1].key, "p/queue/b");
  ASSERT_EQ(view->reads[1].kvs.size(), 1u);
  EXPECT_EQ(view->reads[1].kvs[0].value, "x");
  EXPECT_TRUE(view->reads[2].kvs.empty());
}

// Given a key read at mod_revision R: an update guarded by "mod_revision is R" succeeds once;
// a second one guarded by the same, now stale R fails and leaves the value.
TEST_F(EtcdSingle, ModRevisionCompareGuardsAnUpdate) {
  auto client = open_client(cluster_->endpoints());
  auto put = client.put("budget/pod1", "2");
  ASSERT_TRUE(put.ok()) << put.error().message;
  auto r = put->revision;
  auto update =
      client.txn({Compare::mod_revision_is("budget/pod1", r)}, {TxnOp::put("budget/pod1", "1")});
  ASSERT_TRUE(update.ok()) << update.error().message;
  EXPECT_TRUE(update->succeeded);
  auto stale =
      client.txn({Compare::mod_revision_is("budget/pod1", r)}, {TxnOp::put("budget/pod1", "0")});
  ASSERT_TRUE(stale.ok()) << stale.error().message;
  EXPECT_FALSE(stale->succeeded);
  auto now = client.get("budget/pod1");
  ASSERT_TRUE(now.ok());
  ASSERT_EQ(now->kvs.size(), 1u);
  EXPECT_EQ(now->kvs[0].value, "1");
  EXPECT_EQ(now->kvs[0].mod_revision, update->revision);
}

// Given a key on lease A and a prefix of three keys: a transaction guarded by "still on lease A"
// deletes the prefix in one op (a key beside it stays); guarded by lease B, or once the key is
// gone, it does nothing. This is how a run releases only while its lease still holds.
TEST_F(EtcdSingle, LeaseCompareGuardsAPrefixDelete) {
  auto client = open_client(cluster_->endpoints());
  auto a = client.grant(30);
  auto b = client.grant(30);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(client.put("runs/r1/alive", "ci-1", a->id).ok());
  for (const char* key : {"journal/r1/meta", "journal/r1/records/1", "journal/r1/records/2",
                          "journal/r10/meta"})
    ASSERT_TRUE(client.put(key, "x").ok());
  auto wrong = client.txn({Compare::lease_is("runs/r1/alive", b->id)},
                          {TxnOp::del_prefix("journal/r1/")});
  ASSERT_TRUE(wrong.ok()) << wrong.error().message;
  EXPECT_FALSE(wrong->succeeded) << "a guard naming another lease held";
  auto right = client.txn({Compare::lease_is("runs/r1/alive", a->id)},
                          {TxnOp::del_prefix("journal/r1/"), TxnOp::del("runs/r1/alive")});
  ASSERT_TRUE(right.ok()) << right.error().message;
  EXPECT_TRUE(right->succeeded);
  auto left = client.get_prefix("journal/");
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->kvs.size(), 1u);
  EXPECT_EQ(left->kvs[0].key, "journal/r10/meta");
  auto gone = client.txn({Compare::lease_is("runs/r1/alive", a->id)},
                         {TxnOp::put("journal/r1/end", "x")});
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_FALSE(gone->succeeded) << "a missing key compared as held on the lease";
}

// Given two keys on two 2-second leases: the one whose lease is kept alive stays past several
// TTLs; the other disappears once its lease expires; revoke and time_to_live agree.
TEST_F(EtcdSingle, LeasedKeyStaysWhileKeptAliveAndGoesWhenItExpires) {
  auto client = open_client(cluster_->endpoints());
  auto kept = client.grant(2);
  auto lapsed = client.grant(2);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  ASSERT_TRUE(lapsed.ok()) << lapsed.error().message;
  EXPECT_EQ(kept->ttl, 2);
  ASSERT_TRUE(client.put("holder/kept", "x", kept->id).ok());
  ASSERT_TRUE(client.put("holder/lapsed", "x", lapsed->id).ok());
  auto got = client.get("holder/kept");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->kvs.size(), 1u);
  EXPECT_EQ(got->kvs[0].lease, kept->id);

  // The lapsed key goes (etcd expires within about a TTL plus its check period; bounded poll).
  bool lapsed_gone = eventually(
      [&] {
        auto renewed = client.keepalive(kept->id);
        EXPECT_TRUE(renewed.ok() && renewed->ttl > 0);
        auto r = client.get("holder/lapsed");
        return r.ok() && r->kvs.empty();
      },
      30s);
  EXPECT_TRUE(lapsed_gone) << "a key on an expired lease was still there after 30 s";
  // Keep the other alive for another 3 s (more than its TTL): it stays.
  auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    auto renewed = client.keepalive(kept->id);
    ASSERT_TRUE(renewed.ok()) << renewed.error().message;
    EXPECT_GT(renewed->ttl, 0);
    std::this_thread::sleep_for(300ms);
  }
  auto still = client.get("holder/kept");
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->kvs.size(), 1u) << "a key on a kept-alive lease disappeared";
  auto expired = client.time_to_live(lapsed->id);
  ASSERT_TRUE(expired.ok()) << expired.error().message;
  EXPECT_EQ(expired->ttl, -1);
  auto alive = client.time_to_live(kept->id);
  ASSERT_TRUE(alive.ok());
  EXPECT_GT(alive->ttl, 0);
  EXPECT_EQ(alive->granted_ttl, 2);
  ASSERT_TRUE(client.revoke(kept->id).ok());
  auto revoked = client.get("holder/kept");
  ASSERT_TRUE(revoked.ok());
  EXPECT_TRUE(revoked->kvs.empty()) << "revoking a lease removes its keys";
  auto again = client.revoke(kept->id);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, Kind::rejected);
  EXPECT_EQ(again.error().code, 5) << again.error().message;  // NotFound
}

// Given an endpoint that accepts TCP and never answers: alone, a call fails as timeout within
// its deadline (plus slack for a loaded machine); first in the list, the call fails over to the
// real member and later calls start there.
TEST_F(EtcdSingle, SilentEndpointTimesOutAndTheClientFailsOver) {
  Listener silent(true);
  ASSERT_GT(silent.port, 0);
  auto alone = open_client({silent.url()}, 1s);
  auto start = std::chrono::steady_clock::now();
  auto failed = alone.get("k");
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, Kind::timeout) << failed.error().message;
  EXPECT_LT(took, 10s) << "the 1 s deadline was not kept";

  auto client = open_client({silent.url(), cluster_->endpoints()[0]}, 1s);
  auto put = client.put("after/failover", "v");
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(client.current_endpoint(), cluster_->endpoints()[0]);
  auto got = client.get("after/failover");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->kvs.size(), 1u);

  auto refused = open_client({"http://127.0.0.1:" + std::to_string(free_port())}, 1s).get("k");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, Kind::unreachable) << refused.error().message;
}

// Given auth enabled (etcdctl: user root, role root): a client with the right password (from
// its environment variable, plain http allowed by the lab flag) writes; a wrong password and
// a client without credentials fail as auth, not as rejected.
TEST_F(EtcdSingle, AuthenticatedClientWritesAndOthersFailAsAuth) {
  if (!std::filesystem::exists("/usr/bin/etcdctl"))
    GTEST_SKIP() << "/usr/bin/etcdctl is missing: scripts/bootstrap --tests installs etcd-client";
  std::string endpoint = cluster_->endpoints()[0];
  auto anonymous = open_client({endpoint});
  std::string output;
  for (std::vector<std::string> command :
       {std::vector<std::string>{"user", "add", "root:fabgate-root-pw"},
        std::vector<std::string>{"user", "grant-role", "root", "root"},
        std::vector<std::string>{"auth", "enable"}}) {
    command.insert(command.begin(), {"/usr/bin/etcdctl", "--endpoints", endpoint});
    ASSERT_EQ(fabgate::testing::run_process(command, &output), 0) << output;
  }
  EtcdSettings settings;
  settings.endpoints = {endpoint};
  settings.username = "root";
  settings.password_env = "FABGATE_ETCD_TEST_ROOT_PW";
  settings.lab_plain_http_auth = true;
  ::setenv("FABGATE_ETCD_TEST_ROOT_PW", "fabgate-root-pw", 1);
  auto client = EtcdClient::open(settings);
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto put = client->put("authed", "yes");
  ASSERT_TRUE(put.ok()) << put.error().message;
  auto got = client->get("authed");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->kvs.size(), 1u);

  auto denied = anonymous.put("anonymous", "no");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().kind, Kind::auth) << denied.error().message;

  ::setenv("FABGATE_ETCD_TEST_ROOT_PW", "wrong", 1);
  auto wrong = EtcdClient::open(settings);
  ::unsetenv("FABGATE_ETCD_TEST_ROOT_PW");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, Kind::auth) << wrong.error().message;
  EXPECT_EQ(wrong.error().message.find("wrong"), std::string::npos) << "the password leaked";
}

// Given auth enabled with tokens that expire after 1 s idle (--auth-token-ttl 1): a client
// left idle past that still writes, by authenticating again once on "invalid auth token".
TEST(EtcdAuth, ExpiredTokenIsRenewedOnce) {
  REQUIRE_ETCD();
  if (!std::filesystem::exists("/usr/bin/etcdctl"))
    GTEST_SKIP() << "/usr/bin/etcdctl is missing: scripts/bootstrap --tests installs etcd-client";
  Cluster cluster(1, [](const std::string&) { return std::string("--auth-token-ttl 1"); });
  ASSERT_TRUE(cluster.ready()) << "etcd did not start: " << cluster.log(0);
  std::string endpoint = cluster.endpoints()[0];
  std::string output;
  for (std::vector<std::string> command :
       {std::vector<std::string>{"user", "add", "root:fabgate-root-pw"},
        std::vector<std::string>{"user", "grant-role", "root", "root"},
        std::vector<std::string>{"auth", "enable"}}) {
    command.insert(command.begin(), {"/usr/bin/etcdctl", "--endpoints", endpoint});
    ASSERT_EQ(fabgate::testing::run_process(command, &output), 0) << output;
  }
  EtcdSettings settings;
  settings.endpoints = {endpoint};
  settings.username = "root";
  settings.password_env = "FABGATE_ETCD_TEST_ROOT_PW";
  settings.lab_plain_http_auth = true;
  ::setenv("FABGATE_ETCD_TEST_ROOT_PW", "fabgate-root-pw", 1);
  auto client = EtcdClient::open(settings);
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE(client->put("before/idle", "v").ok());
  // etcd sweeps expired simple tokens about once a second: idle for several.
  std::this_thread::sleep_for(4s);
  auto after = client->put("after/idle", "v");
  ::unsetenv("FABGATE_ETCD_TEST_ROOT_PW");
  ASSERT_TRUE(after.ok()) << after.error().message;
}

// A test CA, a certificate for 127.0.0.1 and one for a client (openssl), in `dir`; returns
// etcd's options for TLS on its client URLs with client certificates required. The server's
// certificate is also for client auth: etcd 3.4's HTTP gateway presents it when it connects to
// the member's own gRPC server.
std::string make_tls_files(const std::string& dir) {
  std::string script =
      "set -e; cd '" + dir +
      "'\n"
      "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1.key; }\n"
      "key ca; openssl req -x509 -new -key ca.key -out ca.crt -days 2 -subj /CN=fabgate-test-ca\n"
      "for who in server client; do\n"
      "  key $who; openssl req -new -key $who.key -out $who.csr -subj /CN=$who\n"
      "done\n"
      "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' "
      ">server.ext\n"
      "printf 'extendedKeyUsage=clientAuth\\n' >client.ext\n"
      "for who in server client; do\n"
      "  openssl x509 -req -in $who.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
      "-extfile $who.ext -out $who.crt\n"
      "done\n";
  std::string output;
  if (fabgate::testing::run_process({"/bin/sh", "-c", script}, &output) != 0)
    throw std::runtime_error("openssl: " + output);
  return "--cert-file " + dir + "/server.crt --key-file " + dir + "/server.key" +
         " --trusted-ca-file " + dir + "/ca.crt --client-cert-auth";
}

// Given a member that serves https and requires client certificates: a client with the CA,
// its certificate and key writes and reads; without the certificate, or without the CA, the
// call fails as unreachable (the handshake), with no throw; a certificate without its key is
// refused as settings.
TEST(EtcdTls, ClientCertificateIsSentAndRequired) {
  REQUIRE_ETCD();
  if (!std::filesystem::exists("/usr/bin/openssl")) GTEST_SKIP() << "/usr/bin/openssl is missing";
  std::string files;
  Cluster cluster(1, [&](const std::string& dir) {
    files = dir;
    return make_tls_files(dir);
  });
  EtcdSettings settings;
  settings.ca_file = files + "/ca.crt";
  settings.cert_file = files + "/client.crt";
  settings.key_file = files + "/client.key";
  ASSERT_TRUE(cluster.ready(settings)) << "etcd did not start with TLS: " << cluster.log(0);
  settings.endpoints = cluster.endpoints();
  ASSERT_EQ(settings.endpoints[0].rfind("https://", 0), 0u);
  auto client = EtcdClient::open(settings);
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto put = client->put("tls/key", "v");
  ASSERT_TRUE(put.ok()) << put.error().message;
  auto got = client->get("tls/key");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->kvs.size(), 1u);

  EtcdSettings no_certificate = settings;
  no_certificate.cert_file.clear();
  no_certificate.key_file.clear();
  auto refused = EtcdClient::open(no_certificate);
  ASSERT_TRUE(refused.ok());
  auto denied = refused->get("tls/key");
  ASSERT_FALSE(denied.ok()) << "etcd answered a client without a certificate";
  EXPECT_EQ(denied.error().kind, Kind::unreachable) << denied.error().message;
  // Its reason varies (TLS 1.3: etcd's "bad certificate" alert, or the connection already
  // closed when curl reads), so only the kind is checked.

  EtcdSettings no_ca = settings;
  no_ca.ca_file.clear();
  auto untrusted = EtcdClient::open(no_ca);
  ASSERT_TRUE(untrusted.ok());
  auto unverified = untrusted->get("tls/key");
  ASSERT_FALSE(unverified.ok()) << "a server certificate from an unknown CA was accepted";
  EXPECT_EQ(unverified.error().kind, Kind::unreachable) << unverified.error().message;
  EXPECT_NE(unverified.error().message.find("certificate"), std::string::npos)
      << unverified.error().message;

  EtcdSettings half = settings;
  half.key_file.clear();
  auto incomplete = EtcdClient::open(half);
  ASSERT_FALSE(incomplete.ok());
  EXPECT_EQ(incomplete.error().kind, Kind::settings);
}

// Given a three-member cluster: when the member the client talks to is killed, calls still
// succeed through the remaining two, and what was written before is still there.
TEST(EtcdCluster, KilledMemberLeavesTheClusterServing) {
  REQUIRE_ETCD();
  Cluster cluster(3);
  ASSERT_TRUE(cluster.ready()) << "the cluster did not form: " << cluster.log(0);
  auto client = open_client(cluster.endpoints(), 2s);

  for (int i = 0; i < 20; ++i) {
    auto put = client.put("before/kill/" + std::to_string(i), "v");
    ASSERT_TRUE(put.ok()) << put.error().message;
  }
  ASSERT_TRUE(client.put("before/kill", "kept").ok());
  EXPECT_EQ(client.current_endpoint(), cluster.endpoints()[0]);
  ::kill(cluster.member(0).process.pid(), SIGKILL);
  ASSERT_TRUE(eventually([&] { return !cluster.member(0).process.running(); }, 10s));
  // The first call after the kill may land while the two others notice (a leader election when
  // n1 led): a few bounded retries, each of which fails over past the dead member.
  bool served = eventually([&] { return client.put("after/kill", "v").ok(); }, 30s);
  ASSERT_TRUE(served) << "the two remaining members did not take writes within 30 s";
  EXPECT_NE(client.current_endpoint(), cluster.endpoints()[0]);
  auto kept = client.get("before/kill");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  ASSERT_EQ(kept->kvs.size(), 1u);
  EXPECT_EQ(kept->kvs[0].value, "kept");
  auto created =
      client.txn({Compare::absent("after/kill/lock")}, {TxnOp::put("after/kill/lock", "me")});
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_TRUE(created->succeeded);
}

// A loopback HTTP server answering every request with `body` (status 200), one at a time.
class CannedServer {
 public:
  explicit CannedServer(std::string body) : body_(std::move(body)) {
    thread_ = std::thread([this] { serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    thread_.join();
  }
  std::string url() const { return listener_.url(); }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listener_.fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int fd = ::accept(listener_.fd, nullptr, nullptr);
      if (fd < 0) continue;
      std::string request;
      char buffer[4096];
      // Read the header and the body its Content-Length announces (bounded by a 5 s poll).
      while (true) {
        pollfd r{fd, POLLIN, 0};
        if (::poll(&r, 1, 5000) <= 0) break;
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
        auto end = request.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        std::size_t length = 0;
        auto at = request.find("Content-Length: ");
        if (at != std::string::npos) length = std::stoul(request.substr(at + 16));
        if (request.size() >= end + 4 + length) break;
      }
      std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
      (void)!::write(fd, answer.data(), answer.size());
      ::close(fd);
    }
  }
  Listener listener_{true};
  std::string body_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Given answers of the wrong types: each call fails as bad_answer naming the field, no throw.
TEST(EtcdClientAnswers, WrongTypesAreBadAnswersNamingTheField) {
  struct Case {
    std::string body;
    std::function<Expected<int, EtcdFailure>(EtcdClient&)> call;
    std::string field;
  };
  auto as_int = [](auto result) -> Expected<int, EtcdFailure> {
    if (!result) return std::move(result).error();
    return 0;
  };
  std::vector<Case> cases = {
      {R"({"header":{"revision":"x12"}})", [&](EtcdClient& c) { return as_int(c.put("k", "v")); },
       "header.revision"},
      {R"({"header":[]})", [&](EtcdClient& c) { return as_int(c.get("k")); }, "header"},
      {R"({"header":{"revision":"3"},"kvs":{"key":"a"}})",
       [&](EtcdClient& c) { return as_int(c.get("k")); }, "kvs"},
      {R"({"header":{"revision":"3"},"kvs":[{"key":17}]})",
       [&](EtcdClient& c) { return as_int(c.get("k")); }, "kvs[0].key"},
      {R"({"header":{"revision":"3"},"kvs":[{"key":"YQ==","mod_revision":true}]})",
       [&](EtcdClient& c) { return as_int(c.get("k")); }, "kvs[0].mod_revision"},
      {R"({"header":{"revision":"3"},"succeeded":"yes"})",
       [&](EtcdClient& c) { return as_int(c.txn({Compare::absent("k")}, {})); }, "succeeded"},
      {R"({"header":{"revision":"3"},"ID":[1],"TTL":"5"})",
       [&](EtcdClient& c) { return as_int(c.grant(5)); }, "ID"},
      {R"({"header":{"revision":"3"}})", [&](EtcdClient& c) { return as_int(c.keepalive(1)); },
       "result"},
      {"<html>not json</html>", [&](EtcdClient& c) { return as_int(c.get("k")); }, "body"},
      {std::string(100, '[') + std::string(100, ']'),
       [&](EtcdClient& c) { return as_int(c.get("k")); }, "body"},
  };
  for (const auto& c : cases) {
    CannedServer server(c.body);
    auto client = open_client({server.url()}, 5s);
    Expected<int, EtcdFailure> result = 0;
    EXPECT_NO_THROW(result = c.call(client)) << c.body;
    ASSERT_FALSE(result.ok()) << c.body;
    EXPECT_EQ(result.error().kind, Kind::bad_answer) << c.body << ": " << result.error().message;
    EXPECT_EQ(result.error().field, c.field) << c.body << ": " << result.error().message;
  }
}

// Given settings that cannot work safely: the client refuses them before sending anything.
TEST(EtcdClientSettings, RefusesUnsafeOrEmptySettings) {
  EtcdSettings none;
  auto empty = EtcdClient::open(none);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, Kind::settings);

  EtcdSettings plain;
  plain.endpoints = {"http://127.0.0.1:1"};
  plain.username = "fabgate";
  plain.password_env = "FABGATE_ETCD_TEST_PASSWORD";
  ::setenv("FABGATE_ETCD_TEST_PASSWORD", "secret", 1);
  auto refused = EtcdClient::open(plain);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, Kind::auth);
  EXPECT_NE(refused.error().message.find("plain http"), std::string::npos);
  EXPECT_EQ(refused.error().message.find("secret"), std::string::npos) << "the password leaked";

  ::unsetenv("FABGATE_ETCD_TEST_PASSWORD");
  plain.lab_plain_http_auth = true;
  auto no_password = EtcdClient::open(plain);
  ASSERT_FALSE(no_password.ok());
  EXPECT_EQ(no_password.error().kind, Kind::auth);
  EXPECT_NE(no_password.error().message.find("FABGATE_ETCD_TEST_PASSWORD"), std::string::npos);

  EtcdSettings certs;
  certs.endpoints = {"https://127.0.0.1:1"};
  certs.cert_file = "/nonexistent.pem";
  auto no_key = EtcdClient::open(certs);
  ASSERT_FALSE(no_key.ok());
  EXPECT_EQ(no_key.error().kind, Kind::settings);
}

TEST(EtcdBase64, RoundTripsEveryByteAndRefusesOtherText) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 256u}) {
    auto decoded = base64_decode(base64_encode(all.substr(0, n)));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, all.substr(0, n));
  }
  EXPECT_EQ(base64_encode("a"), "YQ==");
  EXPECT_FALSE(base64_decode("YQ=").has_value());
  EXPECT_FALSE(base64_decode("Y!==").has_value());
}

}  // namespace
}  // namespace fabgate::etcd
