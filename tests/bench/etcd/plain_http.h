#pragma once

// The floor of the etcd benches (scripts/bench-etcd, scripts/bench-budgets): the least an
// HTTP/JSON client of etcd's gateway can do for a call. One TCP connection kept alive for every
// call (or, to show what a connection costs, a fresh one per call), the request written with one
// send(), the answer read up to its Content-Length; no library, no JSON parser, no base64
// decoding of the answer. The bodies are the same JSON the etcd adapter sends. Errors throw.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fabgate::etcd::bench {

class PlainHttp {
 public:
  // `url` is http://127.0.0.1:PORT (loopback, as the benches' clusters listen).
  PlainHttp(const std::string& url, bool keep_alive) : keep_alive_(keep_alive) {
    const std::string scheme = "http://";
    auto colon = url.rfind(':');
    if (url.compare(0, scheme.size(), scheme) != 0 || colon == std::string::npos ||
        colon < scheme.size())
      throw std::runtime_error("plain http: not an http://HOST:PORT url: " + url);
    host_ = url.substr(scheme.size(), colon - scheme.size());
    port_ = std::atoi(url.c_str() + colon + 1);
    if (inet_pton(AF_INET, host_.c_str(), &address_.sin_addr) != 1 || port_ <= 0)
      throw std::runtime_error("plain http: not an IPv4 address and port: " + url);
    address_.sin_family = AF_INET;
    address_.sin_port = htons(static_cast<std::uint16_t>(port_));
  }
  PlainHttp(const PlainHttp&) = delete;
  PlainHttp& operator=(const PlainHttp&) = delete;
  ~PlainHttp() { close_connection(); }

  // POSTs `body` (JSON) to `path`; returns the answer's body. Throws unless the status is 200.
  std::string post(const std::string& path, const std::string& body) {
    if (fd_ < 0) open_connection();
    std::string request =
        "POST " + path + " HTTP/1.1\r\nHost: " + host_ + ":" + std::to_string(port_) +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        (keep_alive_ ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n") + body;
    send_all(request);
    std::string answer = read_answer();
    if (!keep_alive_) close_connection();
    return answer;
  }

 private:
  void open_connection() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("plain http: socket: ") + strerror(errno));
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address_), sizeof address_) != 0) {
      std::string why = strerror(errno);
      close_connection();
      throw std::runtime_error("plain http: connect " + host_ + ":" + std::to_string(port_) + ": " +
                               why);
    }
    buffer_.clear();
  }
  void close_connection() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send_all(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_connection();
        throw std::runtime_error(std::string("plain http: send: ") + strerror(errno));
      }
      sent += static_cast<std::size_t>(n);
    }
  }
  // Reads more into buffer_, waiting at most 10 s.
  void read_more() {
    pollfd wait{fd_, POLLIN, 0};
    int ready = ::poll(&wait, 1, 10'000);
    if (ready <= 0) {
      close_connection();
      throw std::runtime_error("plain http: no answer within 10 s");
    }
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      close_connection();
      throw std::runtime_error("plain http: the connection closed before the answer ended");
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  std::string read_answer() {
    std::size_t end = 0;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (buffer_.size() > 65536) throw std::runtime_error("plain http: headers too long");
      read_more();
    }
    std::string_view head(buffer_.data(), end);
    if (head.substr(0, 12) != "HTTP/1.1 200")
      throw std::runtime_error("plain http: " + std::string(head.substr(0, head.find('\r'))));
    // etcd 3.4's gateway answers with a Content-Length (no chunked encoding for these calls).
    std::size_t length_at = std::string::npos;
    for (std::string_view name : {"\r\nContent-Length: ", "\r\ncontent-length: "})
      if ((length_at = head.find(name)) != std::string::npos) {
        length_at += name.size();
        break;
      }
    if (length_at == std::string::npos)
      throw std::runtime_error("plain http: an answer without Content-Length");
    const std::size_t length = std::strtoul(buffer_.c_str() + length_at, nullptr, 10);
    const std::size_t body_at = end + 4;
    while (buffer_.size() < body_at + length) read_more();
    std::string body = buffer_.substr(body_at, length);
    buffer_.erase(0, body_at + length);
    return body;
  }

  bool keep_alive_;
  std::string host_;
  int port_ = 0;
  sockaddr_in address_{};
  int fd_ = -1;
  std::string buffer_;
};

// The number after `"revision":"` in an etcd gateway answer (the header's revision), or -1.
inline std::int64_t answer_revision(std::string_view answer) {
  constexpr std::string_view key = "\"revision\":\"";
  auto at = answer.find(key);
  if (at == std::string_view::npos) return -1;
  return std::strtoll(answer.data() + at + key.size(), nullptr, 10);
}

inline bool answer_succeeded(std::string_view answer) {
  return answer.find("\"succeeded\":true") != std::string_view::npos;
}

}  // namespace fabgate::etcd::bench
