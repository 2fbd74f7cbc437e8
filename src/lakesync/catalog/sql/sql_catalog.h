// The SQL catalog: the same two tables as Java's JdbcCatalog and pyiceberg's SqlCatalog
// (iceberg_tables, iceberg_namespace_properties), so all three can share one database as long as
// they use the same catalog name. See shared/specs/iceberg.md §10.2. The database is SQLite (one
// file, the embedded default) or PostgreSQL (a server a team shares); the SQL and the commit
// protocol below are the same for both, only the connection differs (sql_connection_internal.h).
//
// - New databases get pyiceberg 0.12's layout (the "V1" schema, with iceberg_type). Existing ones
//   are used as found: 'TABLE' is written to iceberg_type only when that column exists, and table
//   lookups then skip rows of other types (views written by Java or Rust).
// - A commit writes "<metadata dir>/<version>-<uuid>.metadata.json" and swaps the pointer with a
//   compare-and-swap UPDATE on metadata_location; zero rows changed means another writer won
//   (PostgreSQL re-checks the WHERE clause on the row it waited for, so the swap is atomic at row
//   level there too). A PostgreSQL connection lost after the UPDATE was sent is
//   kCommitStateUnknown and the metadata file is kept.
// - SQLite: the journal mode is left as found (rollback journal by default). WAL would let readers
//   run during a commit, but it is a persistent property of the file that every program sharing it
//   (pyiceberg through SQLAlchemy, Java through sqlite-jdbc) then inherits, it needs shared memory
//   and so breaks on network filesystems, and commits here are short. Instead every connection sets
//   a busy timeout, so a second process waits for the lock rather than failing.
//
// Safe to use from many threads: access to the connection is serialised.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "lakesync/catalog/metastore_catalog.h"

namespace lakesync::catalog {

namespace sql_internal {
class Connection;
}

struct SqlCatalogOptions {
  std::string catalog_name;      // the catalog_name column; must match other programs sharing the file
  // The database: exactly one of database_path (SQLite) and postgres_uri (PostgreSQL, below).
  std::string database_path;     // SQLite: a file path (created if missing) or ":memory:"
  std::string warehouse;         // root location for new tables (normalised, e.g. "file:///abs/wh")
  std::shared_ptr<io::FileIO> io;
  int busy_timeout_ms = 30000;   // SQLite: how long to wait for another process's lock
  bool init_catalog_tables = true;  // create missing catalog tables (pyiceberg's init_catalog_tables)
  std::string postgres_uri;      // PostgreSQL: a libpq URI, postgresql://user@host:port/db
  // PostgreSQL connection keywords that override the URI's (user, password: Java's jdbc.user and
  // jdbc.password).
  std::map<std::string, std::string> postgres_overrides;
};

class SqlCatalog : public MetastoreCatalog {
 public:
  // Opens the database and creates the catalog tables if missing (unless disabled).
  // Errors: InvalidArgument for an empty catalog name or warehouse, a null FileIO, or not exactly one
  // database; IOError when a SQLite database cannot be opened; kCorrupt when the file is not a SQLite
  // database; kUnavailable / kUnauthenticated when a PostgreSQL server cannot be reached or refuses
  // us; NotFound when the tables are missing and init_catalog_tables is false.
  static Result<std::shared_ptr<SqlCatalog>> Make(SqlCatalogOptions options);
  ~SqlCatalog() override;

  std::string name() const override { return options_.catalog_name; }
  std::shared_ptr<io::FileIO> io() const override { return options_.io; }

  // Namespaces: levels joined by '.' (a level may not contain '.'). A namespace exists when a
  // property row names it or any table lives in it or below it. CreateNamespace always stores the
  // property exists=true, which LoadNamespaceMetadata hides. DropNamespace refuses with
  // kNamespaceNotEmpty while tables or child namespaces exist.
  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override;
  Status CreateNamespace(const Namespace& ns, const Properties& properties) override;
  Result<Properties> LoadNamespaceMetadata(const Namespace& ns) override;
  Result<bool> NamespaceExists(const Namespace& ns) override;
  Status DropNamespace(const Namespace& ns) override;
  // Errors: NotFound; InvalidArgument when a key is both removed and updated.
  Status UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                   const Properties& updates) override;

  Result<std::vector<TableIdentifier>> ListTables(const Namespace& ns) override;
  Result<bool> TableExists(const TableIdentifier& identifier) override;
  // With purge, also deletes every metadata file the table's metadata log names and the table's
  // location directory (data files written outside it are left). Errors: NotFound; when the entry is
  // gone but deleting files failed, an IOError saying so.
  Status DropTable(const TableIdentifier& identifier, bool purge) override;
  // Errors: NotFound (source table or target namespace), AlreadyExists (target table).
  Status RenameTable(const TableIdentifier& from, const TableIdentifier& to) override;
  // Errors: NotFound (namespace or metadata file), kCorrupt (unreadable metadata), AlreadyExists.
  Result<LoadedTable> RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) override;

  // Several tables commit in one database transaction (SQLite or PostgreSQL).
  bool SupportsMultiTableCommit() const override { return true; }

  // Whether the database has the optional iceberg_type column (pyiceberg/Java "V1" schema).
  bool has_iceberg_type() const { return has_iceberg_type_; }

 protected:
  Result<std::optional<std::string>> CurrentMetadataLocation(const TableIdentifier& identifier) override;
  Result<std::string> SwapMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                   const iceberg::TableMetadata& metadata) override;
  // A namespace "location" property wins (as in pyiceberg); otherwise
  // DefaultNamespaceLocation/<table>, as Java's JdbcCatalog places tables.
  Result<std::string> DefaultTableLocation(const TableIdentifier& identifier) override;
  // <warehouse>/<ns levels joined by '/'>.
  Result<std::optional<std::string>> DefaultNamespaceLocation(const Namespace& ns) override;
  Result<std::vector<std::string>> SwapMetadataAll(const std::vector<PreparedCommit>& commits) override;

 protected:
  // For Make and for tests that reach the commit primitives through a subclass: construct, then
  // Open() (which validates the options, opens the database and creates the tables).
  explicit SqlCatalog(SqlCatalogOptions options);
  Status Open();

 private:
  Status InitTables();
  // Callers hold mutex_.
  Result<bool> NamespaceExistsLocked(const std::string& ns);
  Result<std::optional<std::string>> CurrentMetadataLocationLocked(const TableIdentifier& identifier);
  // Writes the next metadata file (not yet current) and returns its location.
  Result<std::string> WriteNextMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                        const iceberg::TableMetadata& metadata);
  // Points the table's row at `location` if it still points at `base_location` (empty: inserts the
  // row). Errors: kCommitConflict, kAlreadyExists; the caller holds mutex_ and deletes the file.
  Status SwapRowLocked(const TableIdentifier& identifier, const std::string& base_location,
                       const std::string& location);
  std::string TypeFilter() const;

  SqlCatalogOptions options_;
  std::unique_ptr<sql_internal::Connection> db_;
  bool has_iceberg_type_ = false;
  std::mutex mutex_;
};

}  // namespace lakesync::catalog
