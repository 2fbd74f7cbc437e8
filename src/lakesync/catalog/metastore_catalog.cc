#include "lakesync/catalog/metastore_catalog.h"

#include "lakesync/catalog/metadata_files.h"

#include <set>

#include "lakesync/common/logging.h"

namespace lakesync::catalog {

Status MetastoreCatalog::CheckNamespaceForCreate(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace '{}' does not exist", NamespaceToString(ns));
  return Status::OK();
}

Result<LoadedTable> MetastoreCatalog::LoadTable(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(auto location, CurrentMetadataLocation(identifier));
  if (!location) return NotFound("table '{}' does not exist in catalog '{}'", identifier.ToString(), name());
  LS_ASSIGN_OR_RAISE_CTX(auto metadata, ReadTableMetadata(*io(), *location), "loading table '{}'",
                         identifier.ToString());
  return LoadedTable{identifier, *location, metadata};
}

Result<LoadedTable> MetastoreCatalog::CreateTable(const CreateTableRequest& request) {
  ARROW_RETURN_NOT_OK(CheckNamespaceForCreate(request.identifier.ns));
  ARROW_ASSIGN_OR_RAISE(bool exists, TableExists(request.identifier));
  if (exists) return AlreadyExists("table '{}' already exists", request.identifier.ToString());
  std::string location;
  if (request.location) {
    ARROW_ASSIGN_OR_RAISE(location, io::NormalizeLocation(*request.location));
  } else {
    ARROW_ASSIGN_OR_RAISE(location, DefaultTableLocation(request.identifier));
  }
  ARROW_ASSIGN_OR_RAISE(auto metadata, NewTableMetadata(request, location));
  std::vector<iceberg::TableRequirement> requirements = {iceberg::AssertCreate{}};
  auto created = CommitTable(request.identifier, requirements, iceberg::UpdatesForNewTable(*metadata));
  // Another writer can create the table between the check above and the commit; AssertCreate then
  // fails as a commit conflict, which for a create means the table already exists.
  if (!created.ok() && KindOf(created.status()) == ErrorKind::kCommitConflict) {
    return AlreadyExists("table '{}' already exists (created concurrently)", request.identifier.ToString());
  }
  return created;
}

Result<LoadedTable> MetastoreCatalog::CommitTable(const TableIdentifier& identifier,
                                                  const std::vector<iceberg::TableRequirement>& requirements,
                                                  const std::vector<iceberg::TableUpdate>& updates) {
  const std::string what = "committing to table '" + identifier.ToString() + "'";
  std::optional<LoadedTable> base;
  ARROW_ASSIGN_OR_RAISE(auto current_location, CurrentMetadataLocation(identifier));
  if (current_location) {
    ARROW_ASSIGN_OR_RAISE(auto loaded, LoadTable(identifier));
    base = std::move(loaded);
  }
  const iceberg::TableMetadata* base_metadata = base ? base->metadata.get() : nullptr;
  LS_RETURN_NOT_OK_CTX(iceberg::CheckRequirements(base_metadata, requirements), "{}", what);
  iceberg::ApplyOptions options;
  if (base) {
    options.base_metadata_location = base->metadata_location;
    options.max_previous_versions =
        static_cast<int>(base->metadata->PropertyAsInt(iceberg::kPropMetadataPreviousVersionsMax, 100));
  }
  LS_ASSIGN_OR_RAISE_CTX(auto next, iceberg::ApplyUpdates(base_metadata, updates, options), "{}", what);
  LS_ASSIGN_OR_RAISE_CTX(std::string new_location,
                         SwapMetadata(identifier, base ? base->metadata_location : std::string(), *next), "{}", what);
  if (base && next->Property(iceberg::kPropMetadataDeleteAfterCommit, "false") == "true") {
    DeleteExpiredMetadata(*base, *next);
  }
  return LoadedTable{identifier, new_location, next};
}

void MetastoreCatalog::DeleteExpiredMetadata(const LoadedTable& base, const iceberg::TableMetadata& next) {
  // Metadata files that fell off the metadata log (write.metadata.previous-versions-max) are no
  // longer reachable from the table; deleting them is best effort, like Java's.
  std::set<std::string> kept;
  for (const auto& e : next.metadata_log) kept.insert(e.metadata_file);
  std::vector<std::string> candidates;
  for (const auto& e : base.metadata->metadata_log) candidates.push_back(e.metadata_file);
  candidates.push_back(base.metadata_location);
  for (const auto& file : candidates) {
    if (kept.count(file)) continue;
    auto st = io()->Delete(file);
    if (!st.ok()) LS_LOG_WARN("could not delete old metadata file {}: {}", file, st.message());
  }
}

}  // namespace lakesync::catalog
