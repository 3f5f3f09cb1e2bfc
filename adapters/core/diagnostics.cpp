#include "adapters/core/diagnostics.h"

#include <algorithm>
#include <tuple>

namespace fabgate {

std::string SourceLocation::to_string() const {
  if (line <= 0) return file;
  std::string out = file + ":" + std::to_string(line);
  if (column > 0) out += ":" + std::to_string(column);
  return out;
}

std::string Diagnostic::to_string() const {
  std::string out = where.to_string();
  out += out.empty() ? "error: " : ": error: ";
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  return out;
}

void Diagnostics::error(SourceLocation where, std::string message, std::string hint) {
  items_.push_back(Diagnostic{std::move(where), std::move(message), std::move(hint)});
}

void Diagnostics::add(Diagnostic diagnostic) {
  items_.push_back(std::move(diagnostic));
}

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

std::vector<std::string> Diagnostics::lines() const {
  std::vector<const Diagnostic*> sorted;
  for (const auto& item : items_) sorted.push_back(&item);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic* a, const Diagnostic* b) {
    return std::tie(a->where.file, a->where.line, a->where.column) <
           std::tie(b->where.file, b->where.line, b->where.column);
  });
  std::vector<std::string> out;
  out.reserve(sorted.size());
  for (const auto* item : sorted) out.push_back(item->to_string());
  return out;
}

}  // namespace fabgate
