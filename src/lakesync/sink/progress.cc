#include "lakesync/sink/progress.h"

#include <charconv>

#include "lakesync/table/snapshot_update.h"

namespace lakesync::sink {
namespace {

constexpr std::string_view kPrefix = kSummarySourcePositionPrefix;

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::optional<int64_t> SummaryNumber(const iceberg::Snapshot& s, const std::string& key) {
  auto it = s.summary.find(key);
  if (it == s.summary.end()) return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || end != it->second.data() + it->second.size()) return std::nullopt;
  return v;
}

Result<std::map<std::string, SourcePosition>> CommittedPositions(const iceberg::TableMetadata& metadata) {
  std::map<std::string, SourcePosition> out;
  auto consider = [&](const std::string& key, const std::string& value) -> Status {
    if (!StartsWith(key, kPrefix) || key.size() == kPrefix.size()) return Status::OK();
    const std::string sink_id = key.substr(kPrefix.size());
    ARROW_ASSIGN_OR_RAISE(auto position, ParseSourcePosition(value));
    auto it = out.find(sink_id);
    if (it == out.end() || position.ordinal > it->second.ordinal) out[sink_id] = position;
    return Status::OK();
  };
  if (auto current = metadata.CurrentSnapshot()) {
    for (const auto& s : metadata.Ancestors(current->snapshot_id)) {
      for (const auto& [key, value] : s->summary) ARROW_RETURN_NOT_OK(consider(key, value));
    }
  }
  for (const auto& [key, value] : metadata.properties) ARROW_RETURN_NOT_OK(consider(key, value));
  return out;
}

std::optional<int64_t> LiveRecords(const iceberg::Snapshot& snapshot) {
  auto records = SummaryNumber(snapshot, "total-records");
  if (!records) return std::nullopt;
  if (SummaryNumber(snapshot, "total-equality-deletes").value_or(0) > 0) return std::nullopt;
  return *records - SummaryNumber(snapshot, "total-position-deletes").value_or(0);
}

Result<SnapshotTotals> CountSnapshotTotals(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                                           const iceberg::Snapshot& snapshot) {
  auto records = SummaryNumber(snapshot, "total-records");
  auto files = SummaryNumber(snapshot, "total-data-files");
  auto positions = SummaryNumber(snapshot, "total-position-deletes");
  auto equality = SummaryNumber(snapshot, "total-equality-deletes");
  auto delete_files = SummaryNumber(snapshot, "total-delete-files");
  SnapshotTotals t;
  if (records && files && positions && equality && delete_files) {
    t.records = *records;
    t.data_files = *files;
    t.delete_files = *delete_files;
    t.deleted_positions = *positions;
    t.equality_deletes = *equality;
    return t;
  }
  ARROW_ASSIGN_OR_RAISE(auto live, table::ReadLiveEntries(io, metadata, snapshot));
  t.data_files = static_cast<int64_t>(live.data.size());
  t.delete_files = static_cast<int64_t>(live.deletes.size());
  for (const auto& e : live.data) t.records += e.data_file->record_count;
  for (const auto& e : live.deletes) {
    if (e.data_file->content == iceberg::FileContent::kEqualityDeletes) {
      t.equality_deletes += e.data_file->record_count;
    } else {
      t.deleted_positions += e.data_file->record_count;
    }
  }
  return t;
}

std::optional<int64_t> RemovedRecords(const iceberg::Snapshot& snapshot) {
  const auto& summary = snapshot.summary;
  if (!summary.count("total-records") && !summary.count("deleted-records") && !summary.count("added-position-deletes")) {
    return std::nullopt;
  }
  auto n = [&](const char* key) { return SummaryNumber(snapshot, key).value_or(0); };
  return n("deleted-records") + n("added-position-deletes") - n("removed-position-deletes") +
         n("added-equality-deletes");
}

}  // namespace lakesync::sink
