#include "gates/coordination/store_settings.h"

namespace fabgate::coordination {

namespace {

std::string relative_to(const std::filesystem::path& base, const std::string& path) {
  if (path.empty()) return path;
  std::filesystem::path given(path);
  return given.is_absolute() ? path : (base / given).string();
}

}  // namespace

etcd::EtcdSettings store_settings(const intent::CoordinationSettings& settings,
                                  const std::filesystem::path& intent_dir) {
  etcd::EtcdSettings options;
  options.endpoints = settings.endpoints;
  options.ca_file = relative_to(intent_dir, settings.ca_file);
  options.cert_file = relative_to(intent_dir, settings.cert_file);
  options.key_file = relative_to(intent_dir, settings.key_file);
  options.username = settings.username;
  options.password_env = settings.password_env;
  options.lab_plain_http_auth = settings.lab_plain_http_auth;
  options.timeout = settings.timeout;
  return options;
}

}  // namespace fabgate::coordination
