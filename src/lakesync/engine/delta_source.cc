// The Delta Lake sources of a job: delta_lake_cdc (the Change Data Feed after the committed version)
// and delta_lake (a snapshot import). Ordinals are Delta versions.
#include "lakesync/engine/delta_source.h"

#include <arrow/api.h>
#include <fmt/format.h>

#include "lakesync/common/config_keys.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/delta/log.h"
#include "lakesync/engine/snapshot_as_inserts.h"
#include "lakesync/common/logging.h"
#include "lakesync/engine/source_keys.h"
#include "lakesync/io/hadoop_config.h"

namespace lakesync::engine {
namespace {

using Json = nlohmann::json;

constexpr char kChangeType[] = "_change_type";
constexpr char kCommitVersion[] = "_commit_version";
constexpr char kCommitTimestamp[] = "_commit_timestamp";

class DeltaSource : public ChangeSource {
 public:
  DeltaSource(std::shared_ptr<delta::DeltaTable> table, SourceKeys keys, std::vector<std::string> columns)
      : table_(std::move(table)), keys_(std::move(keys)), columns_(std::move(columns)) {}

  std::string Describe() const override { return fmt::format("delta table {}", table_->location()); }

  Result<std::string> Identity() override {
    // metaData.id is the table's unique id, written when the table is created (PROTOCOL.md).
    ARROW_ASSIGN_OR_RAISE(auto state, delta::ReplayLog(*table_->io(), table_->listing(), table_->latest_version(),
                                                       /*with_files=*/false));
    if (state.metadata && !state.metadata->id.empty()) return state.metadata->id;
    return table_->location();
  }

  Result<std::optional<int64_t>> CommitTimestampMs(int64_t ordinal) override {
    ARROW_ASSIGN_OR_RAISE(int64_t ms, table_->CommitTimestamp(ordinal));
    return std::optional<int64_t>(ms);
  }

  Result<std::optional<int64_t>> Latest() override {
    ARROW_RETURN_NOT_OK(table_->Refresh());
    return std::optional<int64_t>(table_->latest_version());
  }

  Result<std::optional<int64_t>> FirstOrdinal() override {
    if (keys_.start_version) return keys_.start_version;
    if (keys_.start_timestamp_ms) {
      // No commit at or after the start time yet: nothing to do, rather than an error, so a job can
      // be scheduled before its first source commit.
      ARROW_ASSIGN_OR_RAISE(auto latest_ts, table_->CommitTimestamp(table_->latest_version()));
      if (*keys_.start_timestamp_ms > latest_ts) return std::optional<int64_t>();
      ARROW_ASSIGN_OR_RAISE(int64_t v, table_->VersionAtOrAfter(*keys_.start_timestamp_ms));
      return std::optional<int64_t>(v);
    }
    // A snapshot import without a version or timestamp imports the latest version.
    return std::optional<int64_t>(table_->latest_version());
  }

  Result<std::optional<int64_t>> EndOrdinal() override {
    if (keys_.end_version) return keys_.end_version;
    if (keys_.end_timestamp_ms) {
      ARROW_ASSIGN_OR_RAISE(int64_t v, table_->VersionAtOrBefore(*keys_.end_timestamp_ms));
      return std::optional<int64_t>(v);
    }
    return std::optional<int64_t>();
  }

  Result<std::optional<int64_t>> NextAfter(int64_t ordinal) override {
    if (ordinal + 1 > table_->latest_version()) return std::optional<int64_t>();
    return std::optional<int64_t>(ordinal + 1);
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(int64_t from, int64_t through) override {
    delta::ChangeFeedOptions options;
    options.start_version = from;
    options.end_version = through;
    options.metadata_columns = columns_;
    return table_->ReadChanges(options);
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshot(int64_t ordinal) override {
    delta::SnapshotScanOptions options;
    options.version = ordinal;
    ARROW_ASSIGN_OR_RAISE(auto rows, table_->ScanSnapshot(options));
    ARROW_ASSIGN_OR_RAISE(int64_t ts_ms, table_->CommitTimestamp(ordinal));
    arrow::FieldVector fields = rows->schema()->fields();
    for (const auto& c : columns_) {
      if (c == kChangeType) fields.push_back(arrow::field(c, arrow::utf8()));
      if (c == kCommitVersion) fields.push_back(arrow::field(c, arrow::int64()));
      if (c == kCommitTimestamp) fields.push_back(arrow::field(c, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
    }
    return SnapshotAsInserts(std::move(rows), arrow::schema(fields),
                             {{kChangeType, arrow::MakeScalar("insert")},
                              {kCommitVersion, arrow::MakeScalar(ordinal)},
                              {kCommitTimestamp, std::make_shared<arrow::TimestampScalar>(
                                                     ts_ms * 1000, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))}});
  }

  std::string change_type_column() const override { return kChangeType; }
  std::string sequence_column() const override { return kCommitVersion; }
  double poll_interval_seconds() const override { return keys_.poll_interval_seconds; }

 private:
  std::shared_ptr<delta::DeltaTable> table_;
  SourceKeys keys_;
  std::vector<std::string> columns_;
};

}  // namespace

Result<std::unique_ptr<ChangeSource>> OpenDeltaSource(const JobConfig& job) {
  const bool cdc = job.source_type == SourceType::kDeltaLakeCdc;
  const std::string& where = job.location;
  const Json& s = job.source;
  std::vector<std::string> known = {"table", "storage_properties", "hadoop_config"};
  if (cdc) {
    for (const char* k : {"start_version", "start_timestamp", "end_version", "end_timestamp",
                          "include_metadata_columns", "streaming", "poll_interval_seconds", "initial_snapshot"}) {
      known.push_back(k);
    }
  } else {
    known.push_back("version");
    known.push_back("timestamp");
  }
  ARROW_RETURN_NOT_OK(CheckKnownKeys(s, known, where + ": source"));
  SourceKeys keys;
  ARROW_ASSIGN_OR_RAISE(keys.table, RequiredString(s, "table", where, "the Delta table's path or URI"));
  ARROW_ASSIGN_OR_RAISE(auto storage, OptionalStringMap(s, "storage_properties", where));
  // Beam's hadoop_config: the Hadoop keys with a FileIO counterpart, checked for contradictions with
  // storage_properties (which win only when they agree).
  ARROW_ASSIGN_OR_RAISE(auto hadoop, OptionalStringMap(s, "hadoop_config", where));
  if (!hadoop.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto translated, io::TranslateHadoopConfig(hadoop, where + ": source.hadoop_config"));
    for (const auto& key : translated.ignored) {
      LS_LOG_WARN("{}: source.hadoop_config.{} has no effect in lakesync: it names a Java filesystem class, and "
                  "lakesync uses its own client for each scheme", where, key);
    }
    for (const auto& [key, value] : translated.properties) {
      auto [it, inserted] = storage.emplace(key, value);
      if (!inserted && it->second != value) {
        return InvalidArgument("{}: source.hadoop_config sets {} to '{}' but source.storage_properties says '{}'",
                               where, key, value, it->second);
      }
    }
  }
  if (cdc) {
    ARROW_ASSIGN_OR_RAISE(keys.start_version, OptionalVersion(s, "start_version", where));
    ARROW_ASSIGN_OR_RAISE(keys.start_timestamp_ms, OptionalTimestamp(s, "start_timestamp", where));
    ARROW_ASSIGN_OR_RAISE(keys.end_version, OptionalVersion(s, "end_version", where));
    ARROW_ASSIGN_OR_RAISE(keys.end_timestamp_ms, OptionalTimestamp(s, "end_timestamp", where));
    if (keys.start_version.has_value() == keys.start_timestamp_ms.has_value()) {
      return InvalidArgument("{}: source: exactly one of start_version and start_timestamp must be set", where);
    }
    if (keys.end_version && keys.end_timestamp_ms) {
      return InvalidArgument("{}: source: set end_version or end_timestamp, not both", where);
    }
    if (keys.start_version && keys.end_version && *keys.start_version > *keys.end_version) {
      return InvalidArgument("{}: source: start_version {} is after end_version {}", where, *keys.start_version,
                             *keys.end_version);
    }
    ARROW_ASSIGN_OR_RAISE(keys.poll_interval_seconds, OptionalPollInterval(s, where, job.streaming));
  } else {
    ARROW_ASSIGN_OR_RAISE(keys.start_version, OptionalVersion(s, "version", where));
    ARROW_ASSIGN_OR_RAISE(keys.start_timestamp_ms, OptionalTimestamp(s, "timestamp", where));
    if (keys.start_version && keys.start_timestamp_ms) {
      return InvalidArgument("{}: source: set version or timestamp, not both", where);
    }
    if (keys.start_timestamp_ms) {
      // An import "as of" a time reads the last version at or before it.
      keys.as_of = true;
    }
  }
  // The metadata columns asked for, in their order, then the two the sink needs.
  ARROW_ASSIGN_OR_RAISE(auto columns, ChangeFeedColumns(s, where));
  ARROW_ASSIGN_OR_RAISE(auto io, io::FileIO::Make(storage));
  LS_ASSIGN_OR_RAISE_CTX(auto table, delta::DeltaTable::Open(keys.table, io), "{}: source.table", where);
  if (keys.as_of) {
    ARROW_ASSIGN_OR_RAISE(int64_t v, table->VersionAtOrBefore(*keys.start_timestamp_ms));
    keys.start_version = v;
    keys.start_timestamp_ms.reset();
  }
  return std::unique_ptr<ChangeSource>(new DeltaSource(std::move(table), std::move(keys), std::move(columns)));
}

}  // namespace lakesync::engine
