// Kept-alive connections (HttpConnectionPool) against a small HTTP/1.1 server on 127.0.0.1 that
// counts the connections it accepts: requests through one pool share a connection, a connection
// the server closed is replaced without the caller seeing a failure, and no socket is inherited
// by a program the controller starts.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "adapters/prom/http_client.h"
#include "tests/support/test_port.h"

namespace fabgate::prom {
namespace {

// Answers every request on a connection with its own body, keeping the connection open, until
// it has answered `close_after` requests on it (0: never), then closes it without saying so
// (no "Connection: close"), as a server that times idle connections out does. A thread per
// connection; everything is joined when the object goes.
class KeepAliveServer {
 public:
  explicit KeepAliveServer(int close_after = 0) : close_after_(close_after) {
    auto listener = testing::listen_on_loopback();
    fd_ = listener.fd;
    port_ = listener.port;
    acceptor_ = std::thread([this] {
      while (true) {
        int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) return;
        ++accepted_;
        std::lock_guard lock(mutex_);
        clients_.push_back(client);
        workers_.emplace_back([this, client] { serve(client); });
      }
    });
  }
  ~KeepAliveServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (int client : clients_) ::shutdown(client, SHUT_RDWR);
    for (auto& worker : workers_) worker.join();
    for (int client : clients_) ::close(client);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int accepted() const { return accepted_; }

 private:
  void serve(int client) {
    std::string buffer;
    int answered = 0;
    char chunk[4096];
    while (true) {
      auto head_end = buffer.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        ssize_t got = ::recv(client, chunk, sizeof chunk, 0);
        if (got <= 0) return;
        buffer.append(chunk, static_cast<std::size_t>(got));
        continue;
      }
      std::size_t length = 0;
      auto at = buffer.find("Content-Length: ");
      if (at != std::string::npos && at < head_end) length = std::stoul(buffer.substr(at + 16));
      while (buffer.size() < head_end + 4 + length) {
        ssize_t got = ::recv(client, chunk, sizeof chunk, 0);
        if (got <= 0) return;
        buffer.append(chunk, static_cast<std::size_t>(got));
      }
      std::string body = buffer.substr(head_end + 4, length);
      buffer.erase(0, head_end + 4 + length);
      std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
      if (::send(client, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) return;
      if (close_after_ > 0 && ++answered == close_after_) {
        ::shutdown(client, SHUT_RDWR);
        return;
      }
    }
  }

  int close_after_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::mutex mutex_;
  std::vector<int> clients_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

HttpEndpoint endpoint_of(const KeepAliveServer& server,
                         std::shared_ptr<HttpConnectionPool> pool = {}) {
  HttpEndpoint endpoint;
  endpoint.base_url = server.url();
  endpoint.timeout = Duration{5'000};
  endpoint.connections = std::move(pool);
  return endpoint;
}

// Sends `body` and says whether it came back unchanged (the failure's message otherwise).
std::string echo(const HttpEndpoint& endpoint, const std::string& body) {
  auto response = http_request(endpoint, HttpMethod::post, "/v3/kv/range", {}, body);
  if (!response) return response.error().message;
  if (response->status != 200) return "HTTP " + std::to_string(response->status);
  return response->body == body ? "" : "answered " + response->body;
}

TEST(HttpConnectionPool, SequentialRequestsThroughOnePoolUseOneConnection) {
  // Given 20 requests one after another through one pool, then every request is answered with
  // its own body and the server accepted one connection; without a pool it accepts 20.
  KeepAliveServer pooled_server;
  auto pooled = endpoint_of(pooled_server, std::make_shared<HttpConnectionPool>());
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(echo(pooled, "{\"key\":\"" + std::to_string(i) + "\"}"), "") << "request " << i;
  EXPECT_EQ(pooled_server.accepted(), 1);

  KeepAliveServer plain_server;
  auto plain = endpoint_of(plain_server);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(echo(plain, "{}"), "") << "request " << i;
  EXPECT_EQ(plain_server.accepted(), 20);
}

TEST(HttpConnectionPool, ConcurrentRequestsFromSeveralThreadsAreEachAnsweredWithTheirOwnBody) {
  // Given 4 threads sending 25 requests each through one pool (a run's renewals beside its
  // claims), then every answer is the request's own body and no more than 4 connections were
  // opened (one per request in flight at most).
  KeepAliveServer server;
  auto endpoint = endpoint_of(server, std::make_shared<HttpConnectionPool>());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i)
        if (!echo(endpoint,
                  "{\"thread\":" + std::to_string(t) + ",\"i\":" + std::to_string(i) + "}")
                 .empty())
          ++wrong;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(server.accepted(), 1);
  EXPECT_LE(server.accepted(), 4);
}

TEST(HttpConnectionPool, AConnectionTheServerClosedIsReplacedWithoutAFailure) {
  // Given a server that closes each connection after its third answer without saying so (an
  // idle timeout, a restarted member), then 9 requests through one pool all succeed, on 3
  // connections.
  KeepAliveServer server(3);
  auto endpoint = endpoint_of(server, std::make_shared<HttpConnectionPool>());
  for (int i = 0; i < 9; ++i) {
    ASSERT_EQ(echo(endpoint, "{\"n\":" + std::to_string(i) + "}"), "") << "request " << i;
    // Let the close reach the client before the next request, as an idle timeout would.
    if (i % 3 == 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(server.accepted(), 3);
}

TEST(HttpConnectionPool, TheKeptConnectionIsNotInheritedByAProgramTheControllerStarts) {
  // Given a pool holding a kept-alive connection, then every socket this process has open is
  // close-on-exec: ssh, vtysh or a probe started by the run does not hold the connection.
  KeepAliveServer server;
  auto endpoint = endpoint_of(server, std::make_shared<HttpConnectionPool>());
  ASSERT_EQ(echo(endpoint, "{}"), "");
  int sockets = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    auto target = std::filesystem::read_symlink(entry.path(), error);
    if (error || target.string().rfind("socket:", 0) != 0) continue;
    int fd = std::stoi(entry.path().filename().string());
    ++sockets;
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << "socket fd " << fd << " is inheritable";
  }
  // The server's listening socket, its accepted one and the pool's connection at least.
  EXPECT_GE(sockets, 3);
}

}  // namespace
}  // namespace fabgate::prom
