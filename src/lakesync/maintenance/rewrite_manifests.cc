#include "lakesync/maintenance/rewrite_manifests.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "lakesync/catalog/metadata_files.h"
#include "lakesync/common/logging.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/manifest_writer.h"
#include "lakesync/iceberg/manifest/snapshot_manifests.h"
#include "lakesync/table/pending_files.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::maintenance {
namespace {

using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestEntryStatus;
using iceberg::ManifestFile;

constexpr int64_t kDefaultTargetSize = 8LL << 20;  // Iceberg's commit.manifest.target-size-bytes

int64_t TargetSize(const iceberg::TableMetadata& m, const RewriteManifestsOptions& options) {
  if (options.target_size_bytes) return *options.target_size_bytes;
  return m.PropertyAsInt("commit.manifest.target-size-bytes", kDefaultTargetSize);
}

// (content, spec id): a manifest holds one kind of file under one spec.
using GroupKey = std::pair<int, int32_t>;
GroupKey KeyOf(const ManifestFile& m) { return {static_cast<int>(m.content), m.partition_spec_id}; }

struct Grouping {
  std::map<GroupKey, std::vector<const ManifestFile*>> small;  // groups with at least two small manifests
  std::vector<const ManifestFile*> kept;
};

Grouping Group(const std::vector<ManifestFile>& manifests, int64_t target) {
  Grouping g;
  std::map<GroupKey, std::vector<const ManifestFile*>> small;
  for (const auto& m : manifests) {
    if (m.manifest_length < target) {
      small[KeyOf(m)].push_back(&m);
    } else {
      g.kept.push_back(&m);
    }
  }
  for (auto& [key, list] : small) {
    if (list.size() >= 2) {
      g.small[key] = std::move(list);
    } else {
      g.kept.insert(g.kept.end(), list.begin(), list.end());
    }
  }
  return g;
}

// Writes the live entries of one group's manifests into new manifests of about `target` bytes (the
// size per entry estimated from the old manifests), ordered by partition.
Status WriteGroup(const table::Table& table, const iceberg::TableMetadata& base, GroupKey key,
                  const std::vector<const ManifestFile*>& group, int64_t target,
                  std::vector<ManifestFile>& out, std::vector<std::string>& written, int64_t& entries_total) {
  std::vector<ManifestEntry> entries;
  int64_t bytes = 0;
  for (const ManifestFile* m : group) {
    bytes += m->manifest_length;
    LS_ASSIGN_OR_RAISE_CTX(std::string data, table.io()->ReadAll(m->manifest_path), "reading manifest");
    LS_ASSIGN_OR_RAISE_CTX(auto read, iceberg::ReadManifest(data, *m, &base), "reading manifest {}", m->manifest_path);
    for (auto& e : read) {
      if (e.status == ManifestEntryStatus::kDeleted) continue;
      e.status = ManifestEntryStatus::kExisting;
      entries.push_back(std::move(e));
    }
  }
  entries_total += static_cast<int64_t>(entries.size());
  if (entries.empty()) return Status::OK();
  std::stable_sort(entries.begin(), entries.end(), [](const ManifestEntry& a, const ManifestEntry& b) {
    return iceberg::PartitionTupleKey(*a.data_file) < iceberg::PartitionTupleKey(*b.data_file);
  });
  const int64_t per_entry = std::max<int64_t>(1, bytes / static_cast<int64_t>(entries.size()));
  const size_t per_manifest = static_cast<size_t>(std::max<int64_t>(1, target / per_entry));
  auto spec = base.SpecById(key.second);
  if (!spec) return Corrupt("manifests name partition spec {}, which the table does not have", key.second);
  const std::string codec = base.Property("write.avro.compression-codec", "gzip");
  for (size_t first = 0; first < entries.size(); first += per_manifest) {
    iceberg::ManifestWriterOptions options;
    options.format_version = base.format_version;
    options.schema = base.Schema();
    options.spec = spec;
    options.content = static_cast<ManifestContent>(key.first);
    // No snapshot id: the manifest list assigns the new snapshot's (and its sequence number).
    options.codec = codec;
    options.location = io::JoinLocation(catalog::MetadataDirectory(base),
                                        fmt::format("{}-r{}.avro", table.NewFileStem(), out.size()));
    ARROW_ASSIGN_OR_RAISE(auto writer, iceberg::ManifestWriter::Make(options));
    const size_t last = std::min(entries.size(), first + per_manifest);
    for (size_t i = first; i < last; ++i) ARROW_RETURN_NOT_OK(writer->Add(entries[i]));
    ARROW_ASSIGN_OR_RAISE(std::string manifest_bytes, writer->Finish());
    ARROW_RETURN_NOT_OK(table.WriteFile(options.location, manifest_bytes));
    written.push_back(options.location);
    ARROW_ASSIGN_OR_RAISE(auto listed,
                          writer->ToManifestFile(options.location, static_cast<int64_t>(manifest_bytes.size())));
    out.push_back(std::move(listed));
  }
  return Status::OK();
}

}  // namespace

Result<RewriteManifestsResult> RewriteManifests(const std::shared_ptr<table::Table>& table,
                                                const RewriteManifestsOptions& options) {
  RewriteManifestsResult result;
  const auto& m = *table->metadata();
  const int64_t target = TargetSize(m, options);
  if (target <= 0) return InvalidArgument("the manifest target size must be positive, not {}", target);
  auto current = m.CurrentSnapshot();
  if (!current) return result;
  LS_ASSIGN_OR_RAISE_CTX(auto manifests, iceberg::ReadSnapshotManifests(*table->io(), m, *current),
                         "reading the manifests of snapshot {}", current->snapshot_id);
  result.manifests_before = static_cast<int64_t>(manifests.size());
  Grouping plan = Group(manifests, target);
  for (const auto& [key, group] : plan.small) result.manifests_rewritten += static_cast<int64_t>(group.size());
  result.manifests_kept = static_cast<int64_t>(plan.kept.size());
  if (plan.small.empty() || options.dry_run) return result;

  ARROW_RETURN_NOT_OK(table::BeginWriteAttempt(*table));
  table::SnapshotUpdate update(table);
  update.SetOperation(iceberg::kOperationReplace);
  update.SetSummaryProperty("lakesync.maintenance", "rewrite-manifests");
  RewriteManifestsResult attempt_result;
  update.SetManifestRewrite([&](const iceberg::TableMetadata& base, const std::vector<ManifestFile>& live,
                                std::vector<std::string>& written,
                                std::map<std::string, std::string>& summary) -> Result<std::vector<ManifestFile>> {
    // Planned again on the state the attempt commits on (another writer may have committed first).
    Grouping g = Group(live, target);
    attempt_result = result;
    attempt_result.manifests_before = static_cast<int64_t>(live.size());
    attempt_result.manifests_rewritten = 0;
    attempt_result.manifests_kept = static_cast<int64_t>(g.kept.size());
    std::vector<ManifestFile> out;
    for (const ManifestFile* k : g.kept) out.push_back(*k);
    const size_t first_new = out.size();
    for (const auto& [key, group] : g.small) {
      attempt_result.manifests_rewritten += static_cast<int64_t>(group.size());
      ARROW_RETURN_NOT_OK(WriteGroup(*table, base, key, group, target, out, written,
                                     attempt_result.entries));
    }
    attempt_result.manifests_created = static_cast<int64_t>(out.size() - first_new);
    summary["manifests-created"] = std::to_string(attempt_result.manifests_created);
    summary["manifests-kept"] = std::to_string(attempt_result.manifests_kept);
    summary["manifests-replaced"] = std::to_string(attempt_result.manifests_rewritten);
    summary["entries-processed"] = std::to_string(attempt_result.entries);
    return out;
  });
  auto committed = update.Commit();
  table::EndWriteAttempt(*table, committed.status());
  if (!committed.ok()) return WithContext(committed.status(), "rewriting the manifests of " + table->name());
  result = attempt_result;
  result.snapshot_id = committed->snapshot_id;
  LS_LOG_INFO("rewrote {} manifest(s) of {} into {} ({} kept), snapshot {}", result.manifests_rewritten,
              table->name(), result.manifests_created, result.manifests_kept, *result.snapshot_id);
  return result;
}

}  // namespace lakesync::maintenance
