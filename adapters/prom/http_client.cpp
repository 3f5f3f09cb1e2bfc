#include "adapters/prom/http_client.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <array>
#include <memory>
#include <mutex>

namespace fabgate::prom {
namespace {

// Answers larger than this are refused: a query that matches the whole TSDB is a mistake, and
// the controller must not run out of memory reading it.
constexpr std::size_t kMaxAnswerBytes = 64u << 20;

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* handle) const {
    Free(handle);
  }
};
using CurlHandle = std::unique_ptr<CURL, Deleter<curl_easy_cleanup>>;
using CurlHeaders = std::unique_ptr<curl_slist, Deleter<curl_slist_free_all>>;
using CurlText = std::unique_ptr<char, Deleter<curl_free>>;

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Every socket libcurl opens for us is close-on-exec: a pooled connection lives as long as its
// client, and the programs a run starts (ssh, probes, vtysh) must not hold it.
curl_socket_t open_cloexec_socket(void*, curlsocktype, curl_sockaddr* address) {
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

struct Sink {
  std::string body;
  bool overflow = false;
};

std::size_t write_into(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::size_t bytes = size * count;
  if (sink->body.size() + bytes > kMaxAnswerBytes) {
    sink->overflow = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(data, bytes);
  return bytes;
}

HttpFailure::Kind kind_of(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return HttpFailure::Kind::timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      return HttpFailure::Kind::tls;
    default:
      return HttpFailure::Kind::unreachable;
  }
}

std::string_view method_name(HttpMethod method) {
  switch (method) {
    case HttpMethod::get:
      return "GET";
    case HttpMethod::post:
      return "POST";
    case HttpMethod::del:
      return "DELETE";
  }
  return "GET";
}

}  // namespace

// libcurl's share handle with one lock per kind of shared data, as its lock callbacks ask.
struct HttpConnectionPool::State {
  CURLSH* share = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<State*>(user)->locks[static_cast<std::size_t>(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<State*>(user)->locks[static_cast<std::size_t>(data)].unlock();
  }
};

HttpConnectionPool::HttpConnectionPool() : state_(std::make_unique<State>()) {
  global_init_once();
  state_->share = curl_share_init();
  if (!state_->share) return;  // requests then open their own connections
  curl_share_setopt(state_->share, CURLSHOPT_LOCKFUNC, &State::lock);
  curl_share_setopt(state_->share, CURLSHOPT_UNLOCKFUNC, &State::unlock);
  curl_share_setopt(state_->share, CURLSHOPT_USERDATA, state_.get());
  curl_share_setopt(state_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(state_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  curl_share_setopt(state_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
}

HttpConnectionPool::~HttpConnectionPool() {
  // Every request's easy handle is gone by now (each lives within http_request), so the share
  // is no longer in use and closes its connections.
  if (state_->share) curl_share_cleanup(state_->share);
}

std::string_view to_string(HttpFailure::Kind kind) {
  switch (kind) {
    case HttpFailure::Kind::unreachable:
      return "unreachable";
    case HttpFailure::Kind::timeout:
      return "timeout";
    case HttpFailure::Kind::tls:
      return "tls";
    case HttpFailure::Kind::too_large:
      return "too-large";
  }
  return "unreachable";
}

std::string url_encode(const std::string& text) {
  std::string out;
  static const char* hex = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

Expected<HttpResponse, HttpFailure> http_request(const HttpEndpoint& endpoint, HttpMethod method,
                                                 const std::string& path,
                                                 const std::map<std::string, std::string>& form,
                                                 const std::optional<std::string>& json_body) {
  global_init_once();
  std::string base = endpoint.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string url = base + path;
  const std::string what = std::string(method_name(method)) + " " + url;
  CurlHandle curl(curl_easy_init());
  if (!curl) return HttpFailure{HttpFailure::Kind::unreachable, what + ": libcurl init failed"};
  CURL* handle = curl.get();
  char error_text[CURL_ERROR_SIZE] = {0};
  Sink sink;
  std::string body;
  CurlHeaders headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (next) {
      (void)headers.release();
      headers.reset(next);
    }
  };
  long timeout_ms = static_cast<long>(std::max<Duration::rep>(endpoint.timeout.count(), 1));
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // threads: timeouts without SIGALRM
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(handle, CURLOPT_PROXY, "");  // never a proxy from the environment
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open_cloexec_socket);
  if (endpoint.connections && endpoint.connections->state().share)
    curl_easy_setopt(handle, CURLOPT_SHARE, endpoint.connections->state().share);
  curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!endpoint.ca_file.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, endpoint.ca_file.c_str());
  if (!endpoint.cert_file.empty())
    curl_easy_setopt(handle, CURLOPT_SSLCERT, endpoint.cert_file.c_str());
  if (!endpoint.key_file.empty())
    curl_easy_setopt(handle, CURLOPT_SSLKEY, endpoint.key_file.c_str());
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, write_into);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(kMaxAnswerBytes));
  if (!endpoint.bearer_token.empty())
    add_header("Authorization: Bearer " + endpoint.bearer_token);
  else if (!endpoint.authorization.empty())
    add_header("Authorization: " + endpoint.authorization);
  switch (method) {
    case HttpMethod::get:
      curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
      break;
    case HttpMethod::post:
      if (json_body) {
        body = *json_body;
        add_header("Content-Type: application/json");
      } else {
        for (const auto& [key, value] : form) {
          if (!body.empty()) body += '&';
          body += url_encode(key) + "=" + url_encode(value);
        }
        add_header("Content-Type: application/x-www-form-urlencoded");
      }
      curl_easy_setopt(handle, CURLOPT_POST, 1L);
      curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      break;
    case HttpMethod::del:
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
  }
  add_header("Accept: application/json");
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  CURLcode code = curl_easy_perform(handle);
  if (sink.overflow || code == CURLE_FILESIZE_EXCEEDED)
    return HttpFailure{
        HttpFailure::Kind::too_large,
        what + ": answer larger than " + std::to_string(kMaxAnswerBytes >> 20) + " MiB"};
  if (code != CURLE_OK) {
    std::string reason = error_text[0] ? error_text : curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT)
      reason = "timed out after " + format_duration(endpoint.timeout);
    return HttpFailure{kind_of(code), what + ": " + reason};
  }
  HttpResponse response;
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(sink.body);
  return response;
}

}  // namespace fabgate::prom
