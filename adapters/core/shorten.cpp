#include "adapters/core/shorten.h"

#include <algorithm>

namespace fabgate {

std::string shorten(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // A cut at `end` keeps text[0, end). The byte after the limit is looked at too: a phrase or
  // word that ends exactly at the limit is whole.
  std::string_view window = text.substr(0, max_bytes + 1);
  std::size_t end = 0;
  for (std::string_view mark : {". ", "; ", ", ", ": ", " - "}) {
    std::size_t at = window.rfind(mark);
    if (at != std::string_view::npos) end = std::max(end, mark[0] == ' ' ? at : at + 1);
  }
  if (end < max_bytes / 2) {
    std::size_t space = window.rfind(' ');
    end = space != std::string_view::npos && space > 0 ? space : 0;
  }
  if (end == 0) {  // one long word: at a character boundary
    end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  }
  std::string_view kept = text.substr(0, end);
  while (!kept.empty() && std::string_view(" ,;:.-").find(kept.back()) != std::string_view::npos)
    kept.remove_suffix(1);
  return std::string(kept) + "…";
}

}  // namespace fabgate
