#include "lakesync/iceberg/manifest/snapshot_manifests.h"

#include <charconv>

#include "lakesync/formats/avro/avro_file_reader.h"
#include "lakesync/iceberg/manifest/manifest_list.h"
#include "lakesync/iceberg/manifest/manifest_reader.h"

namespace lakesync::iceberg {

Result<std::vector<ManifestFile>> ReadSnapshotManifests(const io::FileIO& io, const TableMetadata& metadata,
                                                        const Snapshot& snapshot) {
  if (!snapshot.manifest_list.empty() || snapshot.manifests.empty()) {
    if (snapshot.manifest_list.empty()) return std::vector<ManifestFile>{};
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io.ReadAll(snapshot.manifest_list),
                           "reading the manifest list of snapshot {}", snapshot.snapshot_id);
    ARROW_ASSIGN_OR_RAISE(auto list, ReadManifestList(bytes, snapshot.manifest_list));
    return std::move(list.manifests);
  }
  std::vector<ManifestFile> out;
  for (const auto& path : snapshot.manifests) {
    LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io.ReadAll(path), "reading manifest {} of snapshot {}", path,
                           snapshot.snapshot_id);
    LS_ASSIGN_OR_RAISE_CTX(auto reader, avro::AvroFileReader::Open(bytes, path), "reading manifest {} of snapshot {}",
                           path, snapshot.snapshot_id);
    ManifestFile m;
    m.manifest_path = path;
    m.manifest_length = static_cast<int64_t>(bytes.size());
    m.partition_spec_id = metadata.default_spec_id;
    if (auto text = reader->FindMetadata("partition-spec-id")) {
      int32_t id = 0;
      auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), id);
      if (ec != std::errc() || end != text->data() + text->size()) {
        return Corrupt("manifest {} of snapshot {}: partition-spec-id '{}' is not a number", path,
                       snapshot.snapshot_id, *text);
      }
      m.partition_spec_id = id;
    }
    m.content = ManifestContent::kData;
    m.sequence_number = 0;
    m.min_sequence_number = 0;
    m.added_snapshot_id = snapshot.snapshot_id;
    // The counts a manifest list would carry, so that a later commit can list the manifest. There is
    // no list entry to check the manifest against (the reader's count check skips it) until they are
    // counted here.
    m.counts_unknown = true;
    LS_ASSIGN_OR_RAISE_CTX(auto entries, ReadManifest(bytes, m, &metadata), "reading manifest {} of snapshot {}",
                           path, snapshot.snapshot_id);
    for (const auto& e : entries) {
      const int64_t rows = e.data_file->record_count;
      switch (e.status) {
        case ManifestEntryStatus::kAdded: ++m.added_files_count; m.added_rows_count += rows; break;
        case ManifestEntryStatus::kExisting: ++m.existing_files_count; m.existing_rows_count += rows; break;
        case ManifestEntryStatus::kDeleted: ++m.deleted_files_count; m.deleted_rows_count += rows; break;
      }
    }
    m.counts_unknown = false;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace lakesync::iceberg
