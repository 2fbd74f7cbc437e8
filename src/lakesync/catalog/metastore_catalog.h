// Shared commit logic for catalogs that store a pointer to the current metadata file (filesystem,
// SQL, Hive): load the current metadata, check requirements, apply updates, write the next metadata
// file, then swap the pointer atomically. Subclasses supply the pointer read and the atomic swap.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "lakesync/catalog/catalog.h"

namespace lakesync::catalog {

class MetastoreCatalog : public Catalog {
 public:
  Result<LoadedTable> LoadTable(const TableIdentifier& identifier) override;
  Result<LoadedTable> CreateTable(const CreateTableRequest& request) override;
  Result<LoadedTable> StageCreateTable(const CreateTableRequest& request) override;
  Result<LoadedTable> CommitTable(const TableIdentifier& identifier,
                                  const std::vector<iceberg::TableRequirement>& requirements,
                                  const std::vector<iceberg::TableUpdate>& updates) override;
  // Prepares every change as CommitTable does (requirements checked, updates applied), then hands
  // them to SwapMetadataAll; metadata files written for a failed transaction are deleted.
  Status CommitTransaction(const std::vector<TableChange>& changes) override;

 protected:
  // A commit checked and applied, not yet swapped in.
  struct PreparedCommit {
    TableIdentifier identifier;
    std::optional<LoadedTable> base;  // nullopt: the table is being created
    std::shared_ptr<iceberg::TableMetadata> next;
  };
  // Loads the base, checks the requirements and applies the updates: the one commit rule every
  // metastore catalog (and so the REST server in front of one) goes through.
  Result<PreparedCommit> PrepareCommit(const TableIdentifier& identifier,
                                       const std::vector<iceberg::TableRequirement>& requirements,
                                       const std::vector<iceberg::TableUpdate>& updates);

  // Makes every prepared commit current at once, or none: returns the new metadata locations in
  // order. Errors as SwapMetadata; kUnsupported by default (SupportsMultiTableCommit() is false).
  virtual Result<std::vector<std::string>> SwapMetadataAll(const std::vector<PreparedCommit>& commits);

  // The current metadata location of a table, or nullopt when the table does not exist.
  virtual Result<std::optional<std::string>> CurrentMetadataLocation(const TableIdentifier& identifier) = 0;

  // Writes `metadata` as the table's next version and makes it current, only if the current
  // location still equals `base_location` (empty: the table must not exist yet). Returns the new
  // location. Errors: kCommitConflict when someone else committed first (nothing changed),
  // kCommitStateUnknown when the outcome cannot be known.
  virtual Result<std::string> SwapMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                           const iceberg::TableMetadata& metadata) = 0;

  // Where a new table lives when the request gives no location.
  virtual Result<std::string> DefaultTableLocation(const TableIdentifier& identifier) = 0;

  // Deletes metadata files dropped from the metadata log by a commit (when
  // write.metadata.delete-after-commit.enabled is true).
  void DeleteExpiredMetadata(const LoadedTable& base, const iceberg::TableMetadata& next);

  // Whether the namespace must exist for CreateTable (true for all but the filesystem catalog).
  virtual Status CheckNamespaceForCreate(const Namespace& ns);
};

}  // namespace lakesync::catalog
