#include "lakesync/catalog/buffered_commits.h"

namespace lakesync::catalog {

Result<LoadedTable> BufferedCommitCatalog::CommitTable(const TableIdentifier& identifier,
                                                       const std::vector<iceberg::TableRequirement>& requirements,
                                                       const std::vector<iceberg::TableUpdate>& updates) {
  const std::string what = "committing to table '" + identifier.ToString() + "'";
  {
    std::lock_guard lock(mutex_);
    for (const auto& p : pending_) {
      if (p.identifier == identifier) {
        return InvalidArgument("{}: the table already has a commit waiting for this transaction", what);
      }
    }
  }
  std::optional<LoadedTable> base;
  auto loaded = inner_->LoadTable(identifier);
  if (loaded.ok()) {
    base = std::move(*loaded);
  } else if (KindOf(loaded.status()) != ErrorKind::kNotFound) {
    return loaded.status();
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
  std::lock_guard lock(mutex_);
  pending_.push_back(TableChange{identifier, requirements, updates});
  return LoadedTable{identifier, base ? base->metadata_location : "", next, base ? base->io : nullptr};
}

Status BufferedCommitCatalog::CommitAll() {
  std::vector<TableChange> changes;
  {
    std::lock_guard lock(mutex_);
    changes.swap(pending_);
  }
  if (changes.empty()) return Status::OK();
  if (changes.size() == 1) {
    return inner_->CommitTable(changes[0].identifier, changes[0].requirements, changes[0].updates).status();
  }
  return inner_->CommitTransaction(changes);
}

std::vector<TableIdentifier> BufferedCommitCatalog::pending() const {
  std::lock_guard lock(mutex_);
  std::vector<TableIdentifier> out;
  for (const auto& p : pending_) out.push_back(p.identifier);
  return out;
}

}  // namespace lakesync::catalog
