#pragma once

#include <string>

namespace fabgate::app {

// Options every subcommand accepts (DESIGN.md CLI contract).
struct CommonOptions {
  std::string repo = ".";    // intent repository, or a folder inside one
  std::string ref = "HEAD";  // commit-ish the intent is read from
  std::string evidence_dir;  // empty: fabgate.yaml's evidence_dir
  bool json = false;         // one JSON document on stdout
  std::string junit_file;    // write JUnit XML here when set
};

}  // namespace fabgate::app
