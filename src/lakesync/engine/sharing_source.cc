// delta_sharing_cdc and delta_sharing: a table shared over Delta Sharing as a job's source. Versions
// are resolved by the server (/version, /changes), rows read by sharing::SharedTable with the Delta
// module's own readers, so a shared table gives the very stream its Delta table would.
#include "lakesync/engine/sharing_source.h"

#include <arrow/api.h>
#include <fmt/format.h>

#include <ctime>

#include "lakesync/common/config_keys.h"
#include "lakesync/common/logging.h"
#include "lakesync/engine/snapshot_as_inserts.h"
#include "lakesync/engine/source_keys.h"
#include "lakesync/sharing/shared_table.h"

namespace lakesync::engine {
namespace {

using Json = nlohmann::json;

constexpr char kChangeType[] = "_change_type";
constexpr char kCommitVersion[] = "_commit_version";

std::string IsoMillis(int64_t ms) {
  const time_t seconds = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

class SharingSource : public ChangeSource {
 public:
  SharingSource(std::shared_ptr<sharing::SharedTable> table, SourceKeys keys, std::vector<std::string> columns)
      : table_(std::move(table)), keys_(std::move(keys)), columns_(std::move(columns)) {}

  std::string Describe() const override { return table_->Describe(); }

  Result<std::optional<int64_t>> Latest() override {
    ARROW_ASSIGN_OR_RAISE(int64_t v, table_->LatestVersion());
    return std::optional<int64_t>(v);
  }

  Result<std::optional<int64_t>> FirstOrdinal() override {
    if (keys_.start_version) return keys_.start_version;
    if (keys_.start_timestamp_ms) {
      // The server answers 400 for a start time after its last commit: nothing to read yet, so the job
      // can be scheduled before the first commit it wants (as with delta_lake_cdc).
      auto v = table_->VersionAtOrAfter(IsoMillis(*keys_.start_timestamp_ms));
      if (!v.ok() && KindOf(v.status()) == ErrorKind::kInvalidArgument) return std::optional<int64_t>();
      ARROW_RETURN_NOT_OK(v.status());
      return std::optional<int64_t>(*v);
    }
    return Latest();
  }

  Result<std::optional<int64_t>> EndOrdinal() override {
    if (keys_.end_version) return keys_.end_version;
    if (keys_.end_timestamp_ms) {
      // The last version at or before T is the one before the first version after T; none after T
      // means the latest.
      auto after = table_->VersionAtOrAfter(IsoMillis(*keys_.end_timestamp_ms + 1));
      if (!after.ok() && KindOf(after.status()) == ErrorKind::kInvalidArgument) return Latest();
      ARROW_RETURN_NOT_OK(after.status());
      return std::optional<int64_t>(*after - 1);
    }
    return std::optional<int64_t>();
  }

  Result<std::optional<int64_t>> NextAfter(int64_t ordinal) override {
    ARROW_ASSIGN_OR_RAISE(int64_t latest, table_->LatestVersion());
    if (ordinal + 1 > latest) return std::optional<int64_t>();
    return std::optional<int64_t>(ordinal + 1);
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadChanges(int64_t from, int64_t through) override {
    delta::ChangeFeedOptions options;
    options.start_version = from;
    options.end_version = through;
    options.metadata_columns = columns_;
    return table_->ReadChanges(options);
  }

  Result<std::vector<int64_t>> SchemaChangesIn(int64_t from, int64_t through) override {
    std::vector<int64_t> out;
    if (through <= from) return out;
    LS_ASSIGN_OR_RAISE_CTX(auto history, table_->SchemaHistory(from, through),
                           "{}: looking for schema changes in versions {}..{}", Describe(), from, through);
    for (size_t i = 1; i < history.size(); ++i) out.push_back(history[i].version);
    return out;
  }

  Result<std::map<std::string, std::string>> RenamesSince(int64_t before, int64_t at) override {
    auto history = table_->SchemaHistory(before, at);
    if (!history.ok()) {
      LS_LOG_WARN("schema_evolution: cannot read the schemas of {} in versions {}..{} to look for renamed columns: {}",
                  Describe(), before, at, history.status().message());
      return std::map<std::string, std::string>();
    }
    return delta::RenamedColumns(history->front().schema, history->back().schema);
  }

  Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshot(int64_t ordinal) override {
    // The latest version is read without naming it, which tables shared without history allow.
    ARROW_ASSIGN_OR_RAISE(int64_t latest, table_->LatestVersion());
    delta::SnapshotScanOptions options;
    if (ordinal != latest) options.version = ordinal;
    ARROW_ASSIGN_OR_RAISE(auto rows, table_->ScanSnapshot(options));
    return DeltaSnapshotAsInserts(std::move(rows), columns_, ordinal,
                                  [&] { return table_->CommitTimestamp(ordinal); });
  }

  std::string change_type_column() const override { return kChangeType; }
  std::string sequence_column() const override { return kCommitVersion; }
  double poll_interval_seconds() const override { return keys_.poll_interval_seconds; }

 private:
  std::shared_ptr<sharing::SharedTable> table_;
  SourceKeys keys_;
  std::vector<std::string> columns_;
};

}  // namespace

Result<std::unique_ptr<ChangeSource>> OpenSharingSource(const JobConfig& job) {
  const bool cdc = job.source_type == SourceType::kDeltaSharingCdc;
  const std::string& where = job.location;
  const Json& s = job.source;
  std::vector<std::string> known = VersionRangeKeyNames(cdc);
  for (const char* k : {"table", "profile", "include_metadata_columns"}) known.push_back(k);
  ARROW_RETURN_NOT_OK(CheckKnownKeys(s, known, where + ": source"));
  SourceKeys keys;
  ARROW_ASSIGN_OR_RAISE(keys.table, RequiredString(s, "table", where, "the shared table as SHARE.SCHEMA.TABLE"));
  std::string url = keys.table;
  if (s.contains("profile")) {
    ARROW_ASSIGN_OR_RAISE(auto profile, RequiredString(s, "profile", where, "the recipient's profile file"));
    if (keys.table.find('#') != std::string::npos) {
      return InvalidArgument("{}: source.table names a profile (PROFILE#...) and source.profile is set too", where);
    }
    url = profile + "#" + keys.table;
  } else if (keys.table.find('#') == std::string::npos) {
    return InvalidArgument("{}: source.profile is required: the profile file of the share (or give source.table as "
                           "PROFILE#SHARE.SCHEMA.TABLE)", where);
  }
  ARROW_RETURN_NOT_OK(ReadVersionRange(s, cdc, job.streaming, where, &keys));
  ARROW_ASSIGN_OR_RAISE(auto columns, ChangeFeedColumns(s, where));
  LS_ASSIGN_OR_RAISE_CTX(auto table, sharing::SharedTable::Open(url), "{}: source", where);
  if (keys.as_of) {
    // An import "as of" a time reads the last version at or before it.
    auto after = table->VersionAtOrAfter(IsoMillis(*keys.start_timestamp_ms + 1));
    if (after.ok()) {
      keys.start_version = *after - 1;
    } else if (KindOf(after.status()) == ErrorKind::kInvalidArgument) {
      ARROW_ASSIGN_OR_RAISE(keys.start_version, table->LatestVersion());
    } else {
      return after.status();
    }
    keys.start_timestamp_ms.reset();
    keys.as_of = false;
    if (*keys.start_version < 0) {
      return InvalidArgument("{}: source.timestamp is before the shared table's first commit", where);
    }
  }
  return std::unique_ptr<ChangeSource>(new SharingSource(std::move(table), std::move(keys), std::move(columns)));
}

}  // namespace lakesync::engine
