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
    // A commit another process found (a Beam poller hands read tasks to other workers) may be newer
    // than this process's view of the log.
    if (through > table_->latest_version()) ARROW_RETURN_NOT_OK(table_->Refresh());
    delta::ChangeFeedOptions options;
    options.start_version = from;
    options.end_version = through;
    options.metadata_columns = columns_;
    return table_->ReadChanges(options);
  }

  Result<std::vector<int64_t>> SchemaChangesIn(int64_t from, int64_t through) override {
    // Only commits with a metaData action can change the schema; most have none, so the state is
    // rebuilt only for those (a metaData that changes properties alone is no schema change).
    std::vector<int64_t> out;
    std::optional<std::string> previous;
    for (int64_t v = from + 1; v <= through; ++v) {
      auto it = table_->listing().commits.find(v);
      if (it == table_->listing().commits.end()) continue;  // the change feed reports a missing commit
      ARROW_ASSIGN_OR_RAISE(auto actions, delta::ReadCommit(*table_->io(), it->second));
      const bool has_metadata = std::any_of(actions.begin(), actions.end(), [](const auto& a) { return a.metadata; });
      if (!has_metadata) continue;
      if (!previous) {
        LS_ASSIGN_OR_RAISE_CTX(auto at_from, table_->SchemaAt(v - 1), "{} at version {}", table_->location(), v - 1);
        previous = at_from.fingerprint;
      }
      LS_ASSIGN_OR_RAISE_CTX(auto at_v, table_->SchemaAt(v), "{} at version {}", table_->location(), v);
      if (at_v.fingerprint != *previous) out.push_back(v);
      previous = at_v.fingerprint;
    }
    return out;
  }

  Result<std::map<std::string, std::string>> RenamesSince(int64_t before, int64_t at) override {
    auto old_schema = table_->SchemaAt(before);
    if (!old_schema.ok()) {
      LS_LOG_WARN("schema_evolution: cannot read the schema of {} at version {} to look for renamed columns: {}",
                  table_->location(), before, old_schema.status().message());
      return std::map<std::string, std::string>();
    }
    LS_ASSIGN_OR_RAISE_CTX(auto new_schema, table_->SchemaAt(at), "{} at version {}", table_->location(), at);
    return delta::RenamedColumns(*old_schema, new_schema);
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshot(int64_t ordinal) override {
    if (ordinal > table_->latest_version()) ARROW_RETURN_NOT_OK(table_->Refresh());
    delta::SnapshotScanOptions options;
    options.version = ordinal;
    ARROW_ASSIGN_OR_RAISE(auto rows, table_->ScanSnapshot(options));
    return DeltaSnapshotAsInserts(std::move(rows), columns_, ordinal,
                                  [&] { return table_->CommitTimestamp(ordinal); });
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
  std::vector<std::string> known = VersionRangeKeyNames(cdc);
  for (const char* k : {"table", "storage_properties", "hadoop_config"}) known.push_back(k);
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
  ARROW_RETURN_NOT_OK(ReadVersionRange(s, cdc, job.streaming, where, &keys));
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
