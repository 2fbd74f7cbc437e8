// The catalog interface every implementation (filesystem, SQL, REST, Hive) provides. Method names
// follow the REST catalog's operationIds. Commits go through CommitTable with REST-style requirements
// and updates (iceberg/commit/table_update.h), so every catalog checks the same things.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/iceberg/model/table_metadata.h"

namespace lakesync::io {
class FileIO;
}

namespace lakesync::catalog {

using Namespace = std::vector<std::string>;
using Properties = std::map<std::string, std::string>;

struct TableIdentifier {
  Namespace ns;
  std::string name;

  // "a.b.t" → ns {a, b}, name t. A name without a namespace is an error that names the input.
  static Result<TableIdentifier> Parse(std::string_view text);
  std::string ToString() const;
  bool operator==(const TableIdentifier&) const = default;
  bool operator<(const TableIdentifier& o) const { return std::tie(ns, name) < std::tie(o.ns, o.name); }
};

Result<Namespace> ParseNamespace(std::string_view text);  // "a.b" → {a, b}
std::string NamespaceToString(const Namespace& ns);      // {a, b} → "a.b"

// A loaded table: its metadata and where that metadata lives.
struct LoadedTable {
  TableIdentifier identifier;
  std::string metadata_location;  // empty for a staged (not yet created) table
  iceberg::TableMetadataPtr metadata;
  // The FileIO for this table's files when it differs from the catalog's (a REST catalog that vends
  // storage credentials with the table); null: the catalog's io().
  std::shared_ptr<io::FileIO> io;
};

// One table's part of a multi-table commit.
struct TableChange {
  TableIdentifier identifier;
  std::vector<iceberg::TableRequirement> requirements;
  std::vector<iceberg::TableUpdate> updates;
};

struct CreateTableRequest {
  TableIdentifier identifier;
  iceberg::SchemaPtr schema;
  iceberg::PartitionSpecPtr spec;       // null: unpartitioned
  iceberg::SortOrderPtr sort_order;     // null: unsorted
  std::optional<std::string> location;  // default: the catalog's location for the identifier
  Properties properties;                // may hold "format-version"
};

class Catalog {
 public:
  virtual ~Catalog() = default;

  virtual std::string name() const = 0;
  virtual std::shared_ptr<io::FileIO> io() const = 0;

  // Namespaces. CreateNamespace fails with kAlreadyExists, DropNamespace with kNotFound or
  // kNamespaceNotEmpty.
  virtual Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) = 0;
  virtual Status CreateNamespace(const Namespace& ns, const Properties& properties) = 0;
  virtual Result<Properties> LoadNamespaceMetadata(const Namespace& ns) = 0;
  virtual Result<bool> NamespaceExists(const Namespace& ns) = 0;
  virtual Status DropNamespace(const Namespace& ns) = 0;
  virtual Status UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                           const Properties& updates) = 0;
  // Where the namespace's new tables go when it has no "location" property: the namespace
  // location Java's JdbcCatalog reports in loadNamespaceMetadata. nullopt where the catalog does not
  // decide it (a REST client: its server does).
  virtual Result<std::optional<std::string>> DefaultNamespaceLocation(const Namespace& ns) {
    (void)ns;
    return std::optional<std::string>();
  }

  // Tables. LoadTable fails with kNotFound when the table does not exist.
  virtual Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) = 0;
  virtual Result<LoadedTable> CreateTable(const CreateTableRequest& request) = 0;
  virtual Result<LoadedTable> LoadTable(const TableIdentifier& identifier) = 0;
  virtual Result<bool> TableExists(const TableIdentifier& identifier) = 0;
  // Drops the catalog entry; with purge, also deletes the table's files.
  virtual Status DropTable(const TableIdentifier& identifier, bool purge) = 0;
  virtual Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) = 0;
  // Registers an existing metadata file as a table.
  virtual Result<LoadedTable> RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) = 0;
  // The metadata CreateTable would commit, without committing it (REST "stage-create"): the caller
  // commits it later with CommitTable(identifier, {AssertCreate}, UpdatesForNewTable(metadata)).
  // Errors: as CreateTable; kUnsupported where the catalog cannot stage.
  virtual Result<LoadedTable> StageCreateTable(const CreateTableRequest& request);

  // Atomically replaces the table's metadata if every requirement holds on the current metadata.
  // Returns kCommitConflict when a requirement fails or another writer won the race (reload and retry),
  // and kCommitStateUnknown when the outcome cannot be known (never clean up files then).
  virtual Result<LoadedTable> CommitTable(const TableIdentifier& identifier,
                                          const std::vector<iceberg::TableRequirement>& requirements,
                                          const std::vector<iceberg::TableUpdate>& updates) = 0;

  // Whether CommitTransaction can commit several tables atomically.
  virtual bool SupportsMultiTableCommit() const { return false; }
  // Commits changes to several tables atomically: all of them or none (REST commitTransaction). Each
  // table appears at most once. Errors: as CommitTable (a failed requirement on any table is a
  // kCommitConflict and nothing is committed); kUnsupported when SupportsMultiTableCommit() is false.
  virtual Status CommitTransaction(const std::vector<TableChange>& changes);
};

// The metadata for a new table (fresh ids are kept as given; the caller assigns them), with
// format-version taken from the properties (default 2) and removed from them.
Result<std::shared_ptr<iceberg::TableMetadata>> NewTableMetadata(const CreateTableRequest& request,
                                                                 const std::string& location);

}  // namespace lakesync::catalog
