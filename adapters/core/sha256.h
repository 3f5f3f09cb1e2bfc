#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace fabgate {

// Lower-case hex sha256 of bytes, and of a file's content (nullopt when it cannot be read).
std::string sha256_hex(std::string_view bytes);
std::optional<std::string> sha256_file_hex(const std::filesystem::path& path);

// Incremental form, for digests over many parts (plan digest, evidence manifest).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex_digest();  // finishes; the object is spent afterwards

 private:
  void* context_;  // EVP_MD_CTX*, kept opaque so OpenSSL headers stay out of users
};

}  // namespace fabgate
