// Reading approval files: each is opened once without following a symbolic link, bounded in
// size, and the bytes that were judged are the bytes the evidence bundle gets, even when the
// file is swapped right after it was judged.

#include "gates/approval/approval_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>

#include "gates/approval/approval_copies.h"
#include "tests/support/temp_dir.h"

namespace fabgate::approval {
namespace {

using testing::read_file;
using testing::write_file;

std::string approval_text(const std::string& approver) {
  SignedApproval approval{approver,
                          "sha256:" + std::string(64, 'a'),
                          "c",
                          std::string(40, '1'),
                          "2026-05-04T10:00:00.000Z",
                          "fabgate-plan",
                          "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"};
  return to_json(approval).dump(2) + "\n";
}

TEST(ApprovalFile, ASymbolicLinkIsRefusedNamingTheFileAndTheFileItselfIsRead) {
  // Given an approval and a symbolic link to it, then reading the link is refused with its
  // name and "is a symbolic link", and reading the file gives its exact bytes and fields.
  testing::TempDir dir("fabgate-approval-file");
  const std::string text = approval_text("alice@example.net");
  write_file(dir.file("alice.json"), text);
  std::filesystem::create_symlink(dir.file("alice.json"), dir.file("link.json"));

  auto link = read_approval_file(dir.file("link.json"));
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().message, "approval " + dir.file("link.json") +
                                      ": is a symbolic link, refused: approval files are read "
                                      "without following links (give the file itself)");
  EXPECT_EQ(link.error().exit_code, ExitCode::invalid_input);

  auto bytes = read_approval_bytes(dir.file("alice.json"));
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  EXPECT_EQ(bytes.value(), text);
  auto approval = read_approval_file(dir.file("alice.json"));
  ASSERT_TRUE(approval.ok()) << approval.error().message;
  EXPECT_EQ(approval->approver, "alice@example.net");
}

TEST(ApprovalFile, AFolderAFifoAndAnOversizedFileAreNotApprovals) {
  // Given a folder, a FIFO nobody writes to and a file one byte over the limit, then each is
  // refused at once naming the file and what it is; the FIFO does not hold the reader.
  testing::TempDir dir("fabgate-approval-file");
  std::filesystem::create_directory(dir.file("folder.json"));
  ASSERT_EQ(::mkfifo(dir.file("fifo.json").c_str(), 0600), 0);
  write_file(dir.file("big.json"), std::string(kMaxApprovalFileBytes + 1, ' '));

  auto folder = read_approval_bytes(dir.file("folder.json"));
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.error().message,
            "approval " + dir.file("folder.json") + ": not an approval: a folder");
  const auto started = std::chrono::steady_clock::now();
  auto fifo = read_approval_bytes(dir.file("fifo.json"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().message,
            "approval " + dir.file("fifo.json") + ": not an approval: a FIFO");
  auto big = read_approval_bytes(dir.file("big.json"));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("approval " + dir.file("big.json") +
                                     ": not an approval: 1048577 bytes, more than 1048576"),
            std::string::npos)
      << big.error().message;
}

TEST(ApprovalFile, JsonThatIsNoApprovalSaysSo) {
  // Given bytes that are not JSON, JSON of another format, and an approval missing a field,
  // then each is refused naming the file and why.
  EXPECT_EQ(parse_approval("a.json", "not json").error().message,
            "approval a.json: not an approval: not a JSON object");
  EXPECT_EQ(parse_approval("plan.json", R"({"format": "fabgate.plan/1"})").error().message,
            "approval plan.json: not an approval: its format is not fabgate.approval/1");
  auto missing = nlohmann::json::parse(approval_text("alice@example.net"));
  missing.erase("digest");
  auto malformed = parse_approval("alice.json", missing.dump());
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().message, "approval alice.json: malformed");
  EXPECT_EQ(malformed.error().details,
            std::vector<std::string>{"'digest' is missing or not a string"});
}

TEST(ApprovalFile, EntriesOfAnApprovalsFolderThatAreNoApprovalFilesAreListed) {
  // Given an approvals folder with an approval, a note, a sub-folder, a link to the approval
  // and a link that leads nowhere, then the note, the sub-folder and the dangling link are
  // listed as "not an approval (why), not copied"; the approval and the link to it are judged
  // (the reader refuses the link), so they are not in the list.
  testing::TempDir dir("fabgate-approval-file");
  write_file(dir.file("alice.json"), approval_text("alice@example.net"));
  write_file(dir.file("notes.txt"), "reviewed\n");
  std::filesystem::create_directory(dir.file("old"));
  std::filesystem::create_symlink(dir.file("alice.json"), dir.file("link.json"));
  std::filesystem::create_symlink(dir.file("gone.json"), dir.file("dangling.json"));

  EXPECT_EQ(non_approvals_in_folders({dir.path(), dir.file("alice.json")}),
            (std::vector<std::string>{
                dir.file("dangling.json") +
                    ": not an approval (a symbolic link that leads nowhere), not copied",
                dir.file("notes.txt") + ": not an approval (not a .json file), not copied",
                dir.file("old") + ": not an approval (a folder), not copied"}));
}

}  // namespace
}  // namespace fabgate::approval
