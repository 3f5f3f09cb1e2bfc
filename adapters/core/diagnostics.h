#pragma once

#include <string>
#include <vector>

namespace fabgate {

// Where a problem sits in a file the user wrote. line and column are 1-based; 0 means unknown
// (a file-level problem such as a missing required file).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string to_string() const;  // "changes/drain.yaml:12:5", or just the file
};

struct Diagnostic {
  SourceLocation where;
  std::string message;  // what is wrong
  std::string hint;     // what to do about it; may be empty

  std::string to_string() const;  // "file:line:col: error: message (hint)"
};

// Collects every problem of a stage so the user sees them all at once (mold's checkpoint
// pattern): validators add and keep going; the caller checks empty() after the stage.
class Diagnostics {
 public:
  void error(SourceLocation where, std::string message, std::string hint = {});
  void add(Diagnostic diagnostic);
  void append(const Diagnostics& other);

  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }

  // Sorted by file, line and column; one line per problem.
  std::vector<std::string> lines() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace fabgate
