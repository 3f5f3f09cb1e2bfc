#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fabgate {

// Where a text stops being well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF). Input files are read as UTF-8 and their text flows into JSON
// evidence, so a file that is not UTF-8 is refused where it is read, naming this place.
struct Utf8Problem {
  std::size_t offset = 0;  // of the first byte of the bad sequence
  int line = 1;            // 1-based
  int column = 1;          // 1-based, in bytes from the start of the line
  unsigned char byte = 0;  // the byte at `offset`

  // "byte 0xff at offset 17 (line 2, column 5) is not UTF-8"
  std::string describe() const;
};

// The first ill-formed sequence of `text`, or nullopt when all of it is UTF-8.
std::optional<Utf8Problem> find_invalid_utf8(std::string_view text);

// `text` with every byte that is not part of a well-formed UTF-8 sequence written as \xNN,
// so a message quoting untrusted input (a parser's "last read" excerpt) stays printable and
// can go into JSON without replacement characters hiding what was there.
std::string escape_invalid_utf8(std::string_view text);

}  // namespace fabgate
