// Sink configuration from files: a sink block in YAML or JSON, a whole job file with a `sink:` key,
// and the file errors (missing, empty, malformed), each naming the path.
#include <filesystem>
#include <fstream>
#include <random>

#include "lakesync/sink/sink_config.h"
#include "sink_test_util.h"

namespace lakesync::sink {
namespace {

using testing::ExpectFailure;

class SinkConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("lakesync-sink-config-" + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(SinkConfigFileTest, YamlAndJsonSinkBlocks) {
  const std::string yaml = Write("sink.yaml", R"(
# the sink block of a Beam Managed I/O write
table: db.orders
mode: merge-on-read
equality_columns: [id]
num_shards: 4
)");
  const std::string json =
      Write("sink.json", R"({"table": "db.orders", "mode": "merge-on-read", "equality_columns": ["id"],
                             "num_shards": 4})");
  ASSERT_OK_AND_ASSIGN(SinkConfig from_yaml, LoadSinkConfigFile(yaml));
  ASSERT_OK_AND_ASSIGN(SinkConfig from_json, LoadSinkConfigFile(json));
  EXPECT_EQ(from_yaml, from_json);
  EXPECT_EQ(from_yaml.num_shards, 4);
  EXPECT_EQ(from_yaml.mode, WriteMode::kMergeOnRead);
}

TEST_F(SinkConfigFileTest, JobFileWithASinkBlock) {
  const std::string path = Write("job.yaml", R"(
source:
  table: gs://bucket/delta/orders
  start_version: 3
sink:
  table: sales.orders
  mode: merge-on-read
  change_type_column: _change_type
  sequence_number_column: _commit_version
schedule: every 15m
)");
  ASSERT_OK_AND_ASSIGN(SinkConfig config, LoadSinkConfigFile(path));
  EXPECT_EQ(config.table, "sales.orders");
  EXPECT_EQ(config.sequence_number_column, "_commit_version");
  // Errors inside the block name the file and the block.
  const std::string bad = Write("bad-job.yaml", "source: {}\nsink:\n  table: db.t\n  upsert: often\n");
  ExpectFailure(LoadSinkConfigFile(bad), ErrorKind::kInvalidArgument, {bad + ": sink: upsert must be a boolean"});
  const std::string json_job = Write("job.json", R"({"source": {"table": "x"}, "sink": {"table": "db.t"}})");
  ASSERT_OK_AND_ASSIGN(config, LoadSinkConfigFile(json_job));
  EXPECT_EQ(config.table, "db.t");
  const std::string scalar_sink = Write("scalar.yaml", "sink: db.t\n");
  ExpectFailure(LoadSinkConfigFile(scalar_sink), ErrorKind::kInvalidArgument,
                {scalar_sink, "sink must be a map of sink options"});
  const std::string null_sink = Write("null.yaml", "sink:\n");
  ExpectFailure(LoadSinkConfigFile(null_sink), ErrorKind::kInvalidArgument, {null_sink, "sink must be a map", "null"});
}

TEST_F(SinkConfigFileTest, FileErrorsNameThePath) {
  const std::string missing = (dir_ / "nope.yaml").string();
  ExpectFailure(LoadSinkConfigFile(missing), ErrorKind::kNotFound, {missing});
  ExpectFailure(LoadSinkConfigFile(dir_.string()), ErrorKind::kIO, {dir_.string(), "directory"});
  const std::string empty = Write("empty.yaml", "");
  ExpectFailure(LoadSinkConfigFile(empty), ErrorKind::kInvalidArgument, {empty, "empty"});
  const std::string comments = Write("comments.yaml", "# nothing here\n");
  ExpectFailure(LoadSinkConfigFile(comments), ErrorKind::kInvalidArgument, {comments, "empty"});
  const std::string malformed = Write("malformed.yaml", "table: db.t\nmode: [append\n");
  ExpectFailure(LoadSinkConfigFile(malformed), ErrorKind::kInvalidArgument, {malformed, "line"});
  const std::string unknown = Write("unknown.yaml", "table: db.t\nnum_shard: 3\n");
  ExpectFailure(LoadSinkConfigFile(unknown), ErrorKind::kInvalidArgument,
                {unknown + ": unknown key 'num_shard'", "'num_shards'"});
  const std::string list = Write("list.yaml", "- table: db.t\n");
  ExpectFailure(LoadSinkConfigFile(list), ErrorKind::kInvalidArgument, {list, "expected a map of sink options"});
}

}  // namespace
}  // namespace lakesync::sink
