// Log replay: checkpoints (classic, multi-part, V2 JSON/Parquet with sidecars) must give the same
// state as replaying every commit, on tables written by Spark (shared corpus).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "delta_test_util.h"
#include "lakesync/delta/log.h"
#include "lakesync/io/location.h"

namespace lakesync::delta {
namespace {

std::set<std::string> Keys(const LogState& s) {
  std::set<std::string> out;
  for (const auto& [k, f] : s.files) out.insert(k);
  return out;
}

void ExpectCheckpointMatchesCommits(const std::string& root, int64_t version, size_t expected_files) {
  auto io = io::FileIO::Make().ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto location, io::NormalizeLocation(root));
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, location));
  ASSERT_FALSE(listing.checkpoints.empty());
  ASSERT_OK_AND_ASSIGN(auto with_cp, ReplayLog(*io, listing, version, true));
  ASSERT_TRUE(with_cp.checkpoint_version.has_value());
  LogListing commits_only = listing;
  commits_only.checkpoints.clear();
  ASSERT_OK_AND_ASSIGN(auto full, ReplayLog(*io, commits_only, version, true));
  EXPECT_FALSE(full.checkpoint_version.has_value());
  EXPECT_EQ(Keys(with_cp), Keys(full));
  EXPECT_EQ(with_cp.files.size(), expected_files);
  EXPECT_EQ(with_cp.metadata->schema_string, full.metadata->schema_string);
  EXPECT_EQ(with_cp.protocol->min_reader_version, full.protocol->min_reader_version);
}

TEST(LogReplayTest, ClassicCheckpointWithTombstones) {
  const std::string root = testing::ExtractCorpus("checkpoint") + "/delta";
  ASSERT_FALSE(root.empty());
  // The README of the corpus: one live placeholder file at every version.
  ExpectCheckpointMatchesCommits(root, 14, 1);
  ExpectCheckpointMatchesCommits(root, 10, 1);
}

TEST(LogReplayTest, MultiPartCheckpoint) {
  const std::string root = testing::ExtractCorpus("multi-part-checkpoint");
  // v0 writes 1 file and v1 9 more.
  ExpectCheckpointMatchesCommits(root + "/delta", 1, 10);
}

TEST(LogReplayTest, IncompleteMultiPartCheckpointIsIgnored) {
  const std::string root = testing::ExtractCorpus("multi-part-checkpoint") + "/delta";
  std::filesystem::remove(root + "/_delta_log/00000000000000000001.checkpoint.0000000002.0000000002.parquet");
  auto io = io::FileIO::Make().ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
  EXPECT_TRUE(listing.checkpoints.empty());
  ASSERT_OK_AND_ASSIGN(auto state, ReplayLog(*io, listing, 1, true));
  EXPECT_EQ(state.files.size(), 10u);
}

TEST(LogReplayTest, V2CheckpointJsonWithSidecars) {
  const std::string root = testing::ExtractCorpus("v2-checkpoint-json") + "/delta";
  auto io = io::FileIO::Make().ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
  ASSERT_EQ(listing.checkpoints.count(2), 1u);
  EXPECT_TRUE(listing.checkpoints.at(2).front().is_json);
  // _last_checkpoint of this table says numOfAddFiles 4.
  ExpectCheckpointMatchesCommits(root, 2, 4);
}

TEST(LogReplayTest, V2CheckpointParquetWithSidecars) {
  const std::string root = testing::ExtractCorpus("v2-checkpoint-parquet") + "/delta";
  auto io = io::FileIO::Make().ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
  ASSERT_EQ(listing.checkpoints.count(2), 1u);
  EXPECT_FALSE(listing.checkpoints.at(2).front().is_json);
  ASSERT_OK_AND_ASSIGN(auto state, ReplayLog(*io, listing, 2, true));
  LogListing commits_only = listing;
  commits_only.checkpoints.clear();
  ASSERT_OK_AND_ASSIGN(auto full, ReplayLog(*io, commits_only, 2, true));
  EXPECT_EQ(Keys(state), Keys(full));
  EXPECT_FALSE(state.files.empty());
}

TEST(LogReplayTest, MissingCommitAndCorruptCheckpoint) {
  const std::string root = testing::ExtractCorpus("checkpoint") + "/delta";
  auto io = io::FileIO::Make().ValueOrDie();
  std::filesystem::remove(root + "/_delta_log/00000000000000000012.json");
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
  auto st = ReplayLog(*io, listing, 14, false).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kNotFound) << st.ToString();
  EXPECT_NE(st.ToString().find("00000000000000000012.json"), std::string::npos) << st.ToString();
  // Version 11 is still reachable: checkpoint 10 + commit 11.
  EXPECT_TRUE(ReplayLog(*io, listing, 11, false).ok());
  std::filesystem::resize_file(root + "/_delta_log/00000000000000000010.checkpoint.parquet", 20);
  st = ReplayLog(*io, listing, 11, false).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt) << st.ToString();
  EXPECT_NE(st.ToString().find("00000000000000000010.checkpoint.parquet"), std::string::npos) << st.ToString();
}

TEST(LogReplayTest, CorruptCommitLineIsNamed) {
  const std::string root = testing::ExtractCorpus("cdf-table-simple");
  {
    std::ofstream f(root + "/_delta_log/00000000000000000001.json", std::ios::app);
    f << "{not json\n";
  }
  auto io = io::FileIO::Make().ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
  auto st = ReplayLog(*io, listing, 1, false).status();
  EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt);
  EXPECT_NE(st.ToString().find("00000000000000000001.json"), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find("line"), std::string::npos) << st.ToString();
}

// A zero-byte (or blank) commit file is a failed write, not a commit without changes: reading it as
// empty would drop that version's changes from the snapshot and the change feed.
TEST(LogReplayTest, EmptyCommitFileIsCorruptAndNamesTheVersion) {
  for (const std::string content : {"", "\n\n  \n"}) {
    const std::string root = testing::ExtractCorpus("cdf-table-simple");
    { std::ofstream f(root + "/_delta_log/00000000000000000001.json", std::ios::trunc); f << content; }
    auto io = io::FileIO::Make().ValueOrDie();
    ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
    auto st = ReplayLog(*io, listing, 1, false).status();
    EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt) << st.ToString();
    EXPECT_NE(st.ToString().find("version 1"), std::string::npos) << st.ToString();
    EXPECT_NE(st.ToString().find("empty"), std::string::npos) << st.ToString();
  }
  LogFile file{7, "/t/_delta_log/00000000000000000007.json"};
  auto parsed = ParseJsonActions("", file, "commit");
  EXPECT_EQ(KindOf(parsed.status()), ErrorKind::kCorrupt);
  EXPECT_NE(parsed.status().message().find("version 7"), std::string::npos) << parsed.status().message();
}

TEST(LogReplayTest, LastCheckpointIsOnlyAHintAndCompactionsAreIgnored) {
  const std::string root = testing::ExtractCorpus("checkpoint") + "/delta";
  auto io = io::FileIO::Make().ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto reference, ListLog(*io, root));
  ASSERT_OK_AND_ASSIGN(auto expected, ReplayLog(*io, reference, 14, true));
  // A corrupt _last_checkpoint and a (garbage) log compaction file change nothing.
  std::ofstream(root + "/_delta_log/_last_checkpoint") << "{not json";
  std::ofstream(root + "/_delta_log/00000000000000000011.00000000000000000013.compacted.json") << "garbage";
  std::ofstream(root + "/_delta_log/.00000000000000000014.json.crc") << "garbage";
  ASSERT_OK_AND_ASSIGN(auto listing, ListLog(*io, root));
  ASSERT_OK_AND_ASSIGN(auto state, ReplayLog(*io, listing, 14, true));
  EXPECT_EQ(Keys(state), Keys(expected));
  EXPECT_EQ(listing.LatestVersion(), 14);
  // And so does its absence.
  std::filesystem::remove(root + "/_delta_log/_last_checkpoint");
  ASSERT_OK_AND_ASSIGN(listing, ListLog(*io, root));
  ASSERT_OK_AND_ASSIGN(state, ReplayLog(*io, listing, 14, true));
  EXPECT_EQ(Keys(state), Keys(expected));
}

TEST(LogReplayTest, NotADeltaTable) {
  auto io = io::FileIO::Make().ValueOrDie();
  const std::string dir = testing::ScratchDir("empty");
  EXPECT_EQ(KindOf(ListLog(*io, dir).status()), ErrorKind::kNotFound);
}

}  // namespace
}  // namespace lakesync::delta
