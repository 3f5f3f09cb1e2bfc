#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/core/duration.h"
#include "adapters/core/result.h"

namespace fabgate::snapshot {

// What to run on one platform (policies/collectors/<platform>.yaml). Each source fills one
// category ("identity" or a fact category) from one or more commands, each with a normalizer.
struct CollectorCommand {
  std::string run;    // the shell command, sent as written
  std::string parse;  // normalizer name (normalizers.h)
};

struct CollectorSource {
  std::string category;
  Duration timeout{10'000};  // per command
  std::vector<CollectorCommand> commands;
};

struct CollectorProfile {
  std::string platform;
  std::string file;  // where it came from, for messages
  std::vector<CollectorSource> sources;
};

// Parses and validates one profile; every problem is listed with file:line:column.
Result<CollectorProfile> parse_collector_profile(std::string_view text, const std::string& file);

// The profiles shipped in the binary (generated from policies/collectors/*.yaml at build time),
// keyed by platform.
const std::map<std::string, std::string_view>& shipped_profile_texts();

// Shipped profiles with `overrides` (platform -> YAML text, e.g. an intent repository's own
// policies/collectors/<platform>.yaml) taking the place of the shipped one of that platform.
using ProfileSet = std::map<std::string, CollectorProfile>;
Result<ProfileSet> load_profiles(const std::map<std::string, std::string>& overrides = {});

}  // namespace fabgate::snapshot
