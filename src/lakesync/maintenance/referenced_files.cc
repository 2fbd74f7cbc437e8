#include "lakesync/maintenance/referenced_files.h"

#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/snapshot_manifests.h"

namespace lakesync::maintenance {

namespace {

Result<bool> Collect(const io::FileIO& io, const iceberg::TableMetadata& m,
                     const std::vector<iceberg::SnapshotPtr>& snapshots, std::set<std::string>& out,
                     std::set<std::string>& manifests_read, const TimeBudget* budget) {
  for (const auto& s : snapshots) {
    if (budget && budget->Spent()) return false;
    if (!s->manifest_list.empty()) out.insert(s->manifest_list);
    LS_ASSIGN_OR_RAISE_CTX(auto manifests, iceberg::ReadSnapshotManifests(io, m, *s), "snapshot {}", s->snapshot_id);
    for (const auto& manifest : manifests) {
      out.insert(manifest.manifest_path);
      if (manifests_read.count(manifest.manifest_path)) continue;
      if (budget && budget->Spent()) return false;
      manifests_read.insert(manifest.manifest_path);
      LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io.ReadAll(manifest.manifest_path), "reading manifest {}",
                             manifest.manifest_path);
      ARROW_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(bytes, manifest, &m));
      for (const auto& e : entries) out.insert(e.data_file->file_path);
    }
  }
  return true;
}

}  // namespace

Status CollectSnapshotFiles(const io::FileIO& io, const iceberg::TableMetadata& m,
                            const std::vector<iceberg::SnapshotPtr>& snapshots, std::set<std::string>& out,
                            std::set<std::string>& manifests_read) {
  return Collect(io, m, snapshots, out, manifests_read, nullptr).status();
}

Result<bool> CollectSnapshotFilesWithin(const io::FileIO& io, const iceberg::TableMetadata& m,
                                        const std::vector<iceberg::SnapshotPtr>& snapshots, std::set<std::string>& out,
                                        std::set<std::string>& manifests_read, const TimeBudget& budget) {
  return Collect(io, m, snapshots, out, manifests_read, &budget);
}

std::string NormalizeLocation(const std::string& location) {
  if (location.rfind("file://", 0) == 0) return location.substr(7);
  if (location.rfind("file:/", 0) == 0) return location.substr(5);
  return location;
}

}  // namespace lakesync::maintenance
