#pragma once

// What an approvals folder holds besides approval files: the approval judge lists each such
// entry by name with why (it is neither judged nor copied into the bundle), so a reviewer sees
// what was left out.

#include <string>
#include <vector>

namespace fabgate::approval {

// "DIR/notes.txt: not an approval (not a .json file), not copied" for every entry of a folder
// in `given` that is not taken as an approval file: a file without the .json extension, a
// symbolic link that leads nowhere or to a folder, a folder. A .json file (or a link to one)
// is taken, and judged.
std::vector<std::string> non_approvals_in_folders(const std::vector<std::string>& given);

}  // namespace fabgate::approval
