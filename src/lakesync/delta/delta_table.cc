#include "lakesync/delta/delta_table.h"

#include <algorithm>
#include <cctype>

#include "lakesync/delta/deletion_vector.h"
#include "lakesync/delta/file_reader_internal.h"
#include "lakesync/delta/table_config.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/io/location.h"

namespace lakesync::delta {

Result<std::string> ResolveLogPath(const std::string& table_root, const std::string& log_path) {
  return internal::ResolvePath(table_root, log_path);
}

Result<int64_t> ParseTimestampMillis(std::string_view text) {
  std::string t(text);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(t.begin());
  if (t.empty()) return InvalidArgument("empty timestamp");
  const bool digits = std::all_of(t.begin() + (t[0] == '-' ? 1 : 0), t.end(), [](char c) { return std::isdigit(c); });
  if (digits && t.size() > (t[0] == '-' ? 1u : 0u)) {
    try {
      return static_cast<int64_t>(std::stoll(t));
    } catch (...) {
      return InvalidArgument("timestamp '{}' is out of range", t);
    }
  }
  if (t.size() == 10) {  // a date alone: midnight UTC
    auto days = iceberg::ParseDate(t);
    if (days.ok()) return int64_t{*days} * 86400000;
  }
  auto micros = iceberg::ParseTimestamp(t, false);
  if (!micros.ok()) {
    return InvalidArgument("timestamp '{}' is neither ISO-8601 (2024-05-01T12:00:00Z) nor epoch milliseconds", t);
  }
  // Floor to milliseconds.
  return *micros >= 0 ? *micros / 1000 : -((-*micros + 999) / 1000);
}

Result<std::shared_ptr<DeltaTable>> DeltaTable::Open(const std::string& location, std::shared_ptr<io::FileIO> io) {
  ARROW_ASSIGN_OR_RAISE(auto root, io::NormalizeLocation(location));
  ARROW_ASSIGN_OR_RAISE(auto listing, ListLog(*io, root));
  return std::shared_ptr<DeltaTable>(new DeltaTable(std::move(io), std::move(listing)));
}

Result<std::shared_ptr<DeltaTable>> DeltaTable::Open(const std::string& location,
                                                     const std::map<std::string, std::string>& io_properties) {
  ARROW_ASSIGN_OR_RAISE(auto io, io::FileIO::Make(io_properties));
  return Open(location, std::move(io));
}

Result<std::vector<int64_t>> DeltaTable::MonotonicMtimes(int64_t from, int64_t to) const {
  // The window starts up to 100 versions back (Spark), at the oldest contiguous commit.
  int64_t w = std::max<int64_t>(0, from - 100);
  for (int64_t v = from; v >= w; --v) {
    if (!listing_.commits.count(v)) {
      w = v + 1;
      break;
    }
  }
  std::vector<int64_t> out;
  int64_t prev = INT64_MIN;
  for (int64_t v = w; v <= to; ++v) {
    auto it = listing_.commits.find(v);
    if (it == listing_.commits.end()) {
      return NotFound("commit {:020d}.json of {} is missing from the log", v, location());
    }
    int64_t ts = it->second.mtime_ms;
    if (prev != INT64_MIN && ts <= prev) ts = prev + 1;
    prev = ts;
    if (v >= from) out.push_back(ts);
  }
  return out;
}

Status DeltaTable::Refresh() {
  ARROW_ASSIGN_OR_RAISE(listing_, ListLog(*io_, listing_.table_root));
  ict_loaded_ = false;
  return Status::OK();
}

Status DeltaTable::LoadIctConfig() {
  if (ict_loaded_) return Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto state, ReplayLog(*io_, listing_, latest_version(), false));
  const IctConfig ict = InCommitTimestamps(*state.metadata);
  ict_enabled_ = ict.enabled;
  ict_from_version_ = ict.enablement_version.value_or(0);
  ict_loaded_ = true;
  return Status::OK();
}

Result<std::optional<int64_t>> DeltaTable::IctOf(int64_t version) {
  auto it = listing_.commits.find(version);
  if (it == listing_.commits.end()) {
    return NotFound("commit {:020d}.json of {} is missing from the log", version, location());
  }
  ARROW_ASSIGN_OR_RAISE(auto actions, ReadCommit(*io_, it->second));
  for (const auto& a : actions) {
    if (a.commit_info && a.commit_info->in_commit_timestamp) return a.commit_info->in_commit_timestamp;
  }
  return std::optional<int64_t>();
}

Result<std::vector<int64_t>> DeltaTable::CommitTimestamps(int64_t from, int64_t to) {
  ARROW_RETURN_NOT_OK(LoadIctConfig());
  std::vector<int64_t> out;
  // The monotonic window starts up to 100 versions back (Spark), at the oldest contiguous commit.
  int64_t w = std::max<int64_t>(0, from - 100);
  for (int64_t v = from; v >= w; --v) {
    if (!listing_.commits.count(v)) {
      w = v + 1;
      break;
    }
  }
  int64_t prev = INT64_MIN;
  for (int64_t v = w; v <= to; ++v) {
    auto it = listing_.commits.find(v);
    if (it == listing_.commits.end()) {
      return NotFound("commit {:020d}.json of {} is missing from the log", v, location());
    }
    int64_t ts;
    if (ict_enabled_ && v >= ict_from_version_) {
      if (v < from) continue;  // ICT needs no window
      ARROW_ASSIGN_OR_RAISE(auto ict, IctOf(v));
      if (!ict) {
        return Corrupt("commit {} of {} has no commitInfo.inCommitTimestamp although In-Commit Timestamps are "
                       "enabled from version {}",
                       it->second.location, location(), ict_from_version_);
      }
      ts = *ict;
    } else {
      ts = it->second.mtime_ms;
      if (prev != INT64_MIN && ts <= prev) ts = prev + 1;
      prev = ts;
    }
    if (v >= from) out.push_back(ts);
  }
  return out;
}

Result<int64_t> DeltaTable::CommitTimestamp(int64_t version) {
  ARROW_ASSIGN_OR_RAISE(auto ts, CommitTimestamps(version, version));
  return ts.at(0);
}

namespace {
// The first version of the contiguous run of commits that ends at the newest commit.
int64_t FirstContiguousCommit(const LogListing& listing) {
  if (listing.commits.empty()) return -1;
  int64_t v = listing.commits.rbegin()->first;
  while (v > 0 && listing.commits.count(v - 1)) --v;
  return v;
}
}  // namespace

Result<int64_t> DeltaTable::VersionAtOrAfter(int64_t ts_ms) {
  ARROW_RETURN_NOT_OK(LoadIctConfig());
  const int64_t lo = FirstContiguousCommit(listing_), hi = listing_.commits.empty() ? -1 : listing_.commits.rbegin()->first;
  if (lo < 0) return NotFound("{} has no commit files", location());
  const int64_t ict_lo = ict_enabled_ ? std::max(lo, ict_from_version_) : hi + 1;
  if (ict_lo > lo) {
    ARROW_ASSIGN_OR_RAISE(auto ts, CommitTimestamps(lo, ict_lo - 1));
    for (size_t i = 0; i < ts.size(); ++i) {
      if (ts[i] >= ts_ms) return lo + static_cast<int64_t>(i);
    }
  }
  // Binary search over the In-Commit Timestamps, which are monotonic by construction.
  int64_t a = ict_lo, b = hi + 1;
  while (a < b) {
    const int64_t mid = a + (b - a) / 2;
    ARROW_ASSIGN_OR_RAISE(auto t, CommitTimestamp(mid));
    if (t >= ts_ms) b = mid; else a = mid + 1;
  }
  if (a <= hi) return a;
  ARROW_ASSIGN_OR_RAISE(auto last, CommitTimestamp(hi));
  return InvalidArgument("timestamp {} ms is after the last commit of {} (version {} at {} ms)", ts_ms, location(), hi,
                         last);
}

Result<int64_t> DeltaTable::VersionAtOrBefore(int64_t ts_ms) {
  ARROW_RETURN_NOT_OK(LoadIctConfig());
  const int64_t lo = FirstContiguousCommit(listing_), hi = listing_.commits.empty() ? -1 : listing_.commits.rbegin()->first;
  if (lo < 0) return NotFound("{} has no commit files", location());
  const int64_t ict_lo = ict_enabled_ ? std::max(lo, ict_from_version_) : hi + 1;
  if (ict_lo <= hi) {
    ARROW_ASSIGN_OR_RAISE(auto first_ict, CommitTimestamp(ict_lo));
    if (first_ict <= ts_ms) {
      int64_t a = ict_lo, b = hi;  // last version with ts <= ts_ms, known to be >= ict_lo
      while (a < b) {
        const int64_t mid = a + (b - a + 1) / 2;
        ARROW_ASSIGN_OR_RAISE(auto t, CommitTimestamp(mid));
        if (t <= ts_ms) a = mid; else b = mid - 1;
      }
      return a;
    }
  }
  if (ict_lo > lo) {
    ARROW_ASSIGN_OR_RAISE(auto ts, CommitTimestamps(lo, ict_lo - 1));
    for (size_t i = ts.size(); i-- > 0;) {
      if (ts[i] <= ts_ms) return lo + static_cast<int64_t>(i);
    }
    return InvalidArgument("timestamp {} ms is before the earliest available commit of {} (version {} at {} ms)", ts_ms,
                           location(), lo, ts.front());
  }
  ARROW_ASSIGN_OR_RAISE(auto first, CommitTimestamp(lo));
  return InvalidArgument("timestamp {} ms is before the earliest available commit of {} (version {} at {} ms)", ts_ms,
                         location(), lo, first);
}

Result<TableSchema> DeltaTable::SchemaAt(int64_t version) {
  ARROW_ASSIGN_OR_RAISE(auto state, ReplayLog(*io_, listing_, version, false));
  ARROW_RETURN_NOT_OK(CheckReadable(*state.protocol, fmt::format("{} at version {}", location(), version)));
  return SchemaOf(*state.protocol, *state.metadata);
}

Result<int64_t> DeltaTable::ResolveSnapshotVersion(const SnapshotScanOptions& options) {
  if (options.version && options.as_of_timestamp_ms) {
    return InvalidArgument("give a version or a timestamp, not both");
  }
  if (options.version) {
    if (*options.version < 0 || *options.version > latest_version()) {
      return InvalidArgument("version {} of {} does not exist (latest is {})", *options.version, location(),
                             latest_version());
    }
    return *options.version;
  }
  if (options.as_of_timestamp_ms) return VersionAtOrBefore(*options.as_of_timestamp_ms);
  return latest_version();
}

Result<LogState> DeltaTable::StateAt(int64_t version, bool with_files) {
  ARROW_ASSIGN_OR_RAISE(auto state, ReplayLog(*io_, listing_, version, with_files));
  ARROW_RETURN_NOT_OK(CheckReadable(*state.protocol, fmt::format("{} at version {}", location(), version)));
  return state;
}

Result<std::shared_ptr<arrow::RecordBatchReader>> DeltaTable::ScanSnapshot(const SnapshotScanOptions& options) {
  ARROW_ASSIGN_OR_RAISE(int64_t version, ResolveSnapshotVersion(options));
  ARROW_ASSIGN_OR_RAISE(auto state, StateAt(version, true));
  std::vector<FileAction> files;
  files.reserve(state.files.size());
  for (auto& [key, f] : state.files) files.push_back(std::move(f));
  return ReadSnapshotFiles(io_, location(), *state.protocol, *state.metadata, files, options, version);
}

Result<std::shared_ptr<arrow::RecordBatchReader>> ReadSnapshotFiles(std::shared_ptr<io::FileIO> io,
                                                                    const std::string& table_root,
                                                                    const Protocol& protocol, const Metadata& metadata,
                                                                    const std::vector<FileAction>& files,
                                                                    const SnapshotScanOptions& options, int64_t version) {
  ARROW_RETURN_NOT_OK(CheckReadable(protocol, fmt::format("{} at version {}", table_root, version)));
  LS_ASSIGN_OR_RAISE_CTX(auto schema, SchemaOf(protocol, metadata), "{} at version {}", table_root, version);
  std::vector<internal::ReadTask> tasks;
  tasks.reserve(files.size());
  for (const auto& f : files) {
    internal::ReadTask t;
    LS_ASSIGN_OR_RAISE_CTX(t.location, internal::ResolvePath(table_root, f.path), "version {}", version);
    t.size = f.size;
    if (f.partition_values) t.partition_values = *f.partition_values;
    t.version = version;
    if (f.deletion_vector) {
      LS_ASSIGN_OR_RAISE_CTX(auto dv, LoadDeletionVector(*io, table_root, *f.deletion_vector),
                             "deletion vector of {} at version {}", t.location, version);
      if (!dv.IsEmpty()) t.drop = std::make_shared<const puffin::PositionBitmap>(std::move(dv));
    }
    tasks.push_back(std::move(t));
  }
  internal::StreamOptions so;
  so.select = options.select;
  so.limit = options.limit;
  return internal::MakeTaskReader(std::move(io), std::move(schema), std::move(tasks), std::move(so));
}

}  // namespace lakesync::delta
