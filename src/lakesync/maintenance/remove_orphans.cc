#include "lakesync/maintenance/remove_orphans.h"

#include <algorithm>
#include <deque>
#include <set>

#include "lakesync/common/failpoint.h"
#include "lakesync/common/logging.h"
#include "lakesync/maintenance/budget.h"
#include "lakesync/maintenance/referenced_files.h"

namespace lakesync::maintenance {
namespace {

// Kill point for the crash tests: reached after each file deleted.
constexpr char kFailpointOrphansAfterDelete[] = "remove-orphans.after-delete";

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Files the metadata does not list but that belong to the table's bookkeeping.
bool Bookkeeping(const std::string& location) {
  return EndsWith(location, "/version-hint.text") || location.find("/lakesync-pending/") != std::string::npos;
}

}  // namespace

Result<RemoveOrphansResult> RemoveOrphans(table::Table& table, const RemoveOrphansOptions& options) {
  const TimeBudget budget(options.max_duration);
  const iceberg::TableMetadata& m = *table.metadata();
  const io::FileIO& io = *table.io();
  std::set<std::string> referenced_raw, manifests_read;
  ARROW_RETURN_NOT_OK(CollectSnapshotFiles(io, m, m.snapshots, referenced_raw, manifests_read));
  referenced_raw.insert(table.metadata_location());
  for (const auto& entry : m.metadata_log) referenced_raw.insert(entry.metadata_file);
  for (const auto* stats : {&m.statistics, &m.partition_statistics}) {
    for (const auto& s : *stats) {
      if (s.is_object() && s.contains("statistics-path") && s["statistics-path"].is_string()) {
        referenced_raw.insert(s["statistics-path"].get<std::string>());
      }
    }
  }
  std::set<std::string> referenced;
  for (const auto& f : referenced_raw) referenced.insert(NormalizeLocation(f));

  RemoveOrphansResult result;
  auto judge = [&](const io::FileInfo& info) {
    ++result.files_listed;
    if (referenced.count(NormalizeLocation(info.location)) || Bookkeeping(info.location)) return;
    // A file whose age the store does not tell is never taken for an orphan.
    if (info.mtime_ms < 0 || info.mtime_ms >= options.older_than_ms) {
      result.too_young.push_back(info.location);
      return;
    }
    result.orphans.push_back(info.location);
    result.orphan_bytes += std::max<int64_t>(info.size, 0);
  };
  std::deque<std::string> directories = {m.location};
  if (!options.max_duration) {
    // No budget: one recursive listing (on object stores, far fewer requests than one per directory).
    LS_ASSIGN_OR_RAISE_CTX(auto listing, io.List(m.location, /*recursive=*/true), "listing {}", m.location);
    for (const auto& info : listing) {
      if (!info.is_dir) judge(info);
    }
    directories.clear();
  }
  // With a budget, listing is planning within it, one directory at a time (breadth first, each in
  // name order, so that what a cut-short run lists is the same on every store): a directory is listed
  // only while the budget lasts, except that listing goes on until one orphan is found (the step's
  // first unit of work always happens). Directories not listed are named; their orphans are the next
  // run's.
  while (!directories.empty()) {
    if (budget.Spent() && !result.orphans.empty()) break;
    const std::string dir = directories.front();
    directories.pop_front();
    LS_ASSIGN_OR_RAISE_CTX(auto listing, io.List(dir, /*recursive=*/false), "listing {}", dir);
    std::sort(listing.begin(), listing.end(),
              [](const io::FileInfo& a, const io::FileInfo& b) { return a.location < b.location; });
    for (const auto& info : listing) {
      if (info.is_dir) {
        directories.push_back(info.location);
      } else {
        judge(info);
      }
    }
  }
  result.unlisted_directories.assign(directories.begin(), directories.end());
  if (!result.unlisted_directories.empty()) {
    LS_LOG_INFO("remove-orphans on {}: the time budget ran out listing; {} directory(ies) left for the next run",
                table.name(), result.unlisted_directories.size());
  }
  if (!options.apply) return result;
  std::vector<std::string> deleted;
  size_t tried = 0;
  for (const auto& f : result.orphans) {
    if (tried++ > 0 && budget.Spent()) {
      result.left.push_back(f);
      continue;
    }
    auto st = io.Delete(f);
    if (st.ok() || KindOf(st) == ErrorKind::kNotFound) {
      deleted.push_back(f);
    } else {
      LS_LOG_WARN("remove-orphans on {}: could not delete {}: {}", table.name(), f, st.message());
      result.undeleted.push_back(f);
    }
    Failpoint(kFailpointOrphansAfterDelete);
  }
  result.orphans = std::move(deleted);
  return result;
}

}  // namespace lakesync::maintenance
