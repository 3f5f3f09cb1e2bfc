#include "adapters/core/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <stdexcept>

namespace fabgate {

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_ ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL digest initialisation failed");
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_));
}

void Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), bytes.data(), bytes.size());
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_), digest, &length);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hex_digest();
}

std::optional<std::string> sha256_file_hex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Sha256 hash;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    hash.update(std::string_view(buffer, static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return std::nullopt;
  return hash.hex_digest();
}

}  // namespace fabgate
