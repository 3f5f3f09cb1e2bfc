#include "gates/pipeline/families/secret_substitution.h"

#include <algorithm>
#include <optional>

namespace fabgate::pipeline {
namespace {

bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

// One reference starting at text[at] == '$': the name and the length of the whole reference.
struct Reference {
  std::string_view name;
  std::size_t length = 0;
};

std::optional<Reference> reference_at(std::string_view text, std::size_t at) {
  std::size_t start = at + 1;
  bool braced = start < text.size() && text[start] == '{';
  if (braced) ++start;
  if (start >= text.size() || !is_name_start(text[start])) return std::nullopt;
  std::size_t end = start;
  while (end < text.size() && is_name_char(text[end])) ++end;
  if (braced) {
    if (end >= text.size() || text[end] != '}') return std::nullopt;  // ${NAME:-x} and the like
    return Reference{text.substr(start, end - start), end + 1 - at};
  }
  return Reference{text.substr(start, end - start), end - at};
}

}  // namespace

std::vector<std::string> secret_references(std::string_view text,
                                           const std::vector<std::string>& names) {
  std::vector<std::string> found;
  for (std::size_t at = text.find('$'); at != std::string_view::npos; at = text.find('$', at + 1)) {
    auto reference = reference_at(text, at);
    if (!reference) continue;
    std::string name(reference->name);
    if (std::find(names.begin(), names.end(), name) != names.end() &&
        std::find(found.begin(), found.end(), name) == found.end())
      found.push_back(std::move(name));
  }
  return found;
}

std::string substitute_secrets(std::string_view text, const SecretValues& values) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t at = text.find('$'); at != std::string_view::npos;) {
    auto reference = reference_at(text, at);
    auto value = reference ? values.find(std::string(reference->name)) : values.end();
    if (value == values.end()) {
      at = text.find('$', at + 1);
      continue;
    }
    out.append(text.substr(copied, at - copied));
    out += value->second;
    copied = at + reference->length;
    at = text.find('$', copied);
  }
  out.append(text.substr(copied));
  return out;
}

RemoteResult SecretSubstitutingRemote::run(const intent::Device& device, ssh::CredentialRole role,
                                           const std::string& command, Duration deadline,
                                           std::string_view purpose) {
  if (auto names = secret_references(command, withheld_); !names.empty()) {
    std::string listed;
    for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name;
    return ssh::SshFailure{ssh::SshFailure::Kind::rejected,
                           "not sent: it uses the secrets.env variable(s) " + listed +
                               ", and a plan delivers no secrets: they reach devices only in an "
                               "apply or rehearse of an approved change"};
  }
  std::string substituted = substitute_secrets(command, values_);
  if (substituted == command) return inner_.run(device, role, command, deadline, purpose);
  // The values must not appear in the device's process list: the text goes on stdin.
  return inner_.run_via_stdin(device, role, substituted, deadline, purpose);
}

}  // namespace fabgate::pipeline
