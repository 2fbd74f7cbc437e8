#include "lakesync/catalog/sql/sql_catalog.h"

#include <algorithm>
#include <set>

#include "lakesync/catalog/metadata_files.h"
#include "lakesync/catalog/sql/postgres_internal.h"
#include "lakesync/catalog/sql/sqlite_internal.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog {

using sql_internal::Row;
using sql_internal::Transaction;
using sql_internal::Value;

namespace {

// The DDL pyiceberg 0.12 (SQLAlchemy's create_all) issues on SQLite (and, but for whitespace, on
// PostgreSQL), so a database we create looks exactly like one pyiceberg created. Java's JdbcCatalog declares property_key/property_value
// nullable; on tables it created we only ever write non-null values, so both layouts work.
constexpr char kCreateTablesTable[] = R"(CREATE TABLE IF NOT EXISTS iceberg_tables (
	catalog_name VARCHAR(255) NOT NULL, 
	table_namespace VARCHAR(255) NOT NULL, 
	table_name VARCHAR(255) NOT NULL, 
	metadata_location VARCHAR(1000), 
	previous_metadata_location VARCHAR(1000), 
	iceberg_type VARCHAR(5), 
	PRIMARY KEY (catalog_name, table_namespace, table_name)
))";
constexpr char kCreateNamespacePropertiesTable[] = R"(CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
	catalog_name VARCHAR(255) NOT NULL, 
	namespace VARCHAR(255) NOT NULL, 
	property_key VARCHAR(255) NOT NULL, 
	property_value VARCHAR(1000) NOT NULL, 
	PRIMARY KEY (catalog_name, namespace, property_key)
))";

constexpr char kTableType[] = "TABLE";
// The property every namespace created here carries, so that an empty namespace has a row.
constexpr char kExistsProperty[] = "exists";

// Levels are joined with '.', so a level holding '.' (or an empty level) could not be read back.
Result<std::string> NamespaceKey(const Namespace& ns) {
  if (ns.empty()) return InvalidArgument("the empty (root) namespace cannot be used here");
  for (const auto& level : ns) {
    if (level.empty()) return InvalidArgument("invalid namespace '{}': empty level", NamespaceToString(ns));
    if (level.find('.') != std::string::npos) {
      return InvalidArgument("invalid namespace level '{}' in '{}': the SQL catalog joins levels with '.'", level,
                             NamespaceToString(ns));
    }
  }
  return NamespaceToString(ns);
}

Status ValidateIdentifier(const TableIdentifier& id) {
  ARROW_RETURN_NOT_OK(NamespaceKey(id.ns).status());
  if (id.name.empty()) return InvalidArgument("invalid table identifier '{}': empty table name", id.ToString());
  return Status::OK();
}

Namespace SplitNamespace(const std::string& key) {
  Namespace out;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    out.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

// Deletes the files a dropped table's metadata names and its location directory. Keeps going
// after a failure and reports the first one.
Status PurgeTableFiles(const io::FileIO& io, const iceberg::TableMetadata& metadata,
                       const std::string& metadata_location, const std::string& warehouse) {
  Status first;
  auto note = [&first](Status st) {
    if (first.ok() && !st.ok()) first = std::move(st);
  };
  for (const auto& snapshot : metadata.snapshots) {
    if (!snapshot->manifest_list.empty()) note(io.Delete(snapshot->manifest_list));
  }
  for (const auto& entry : metadata.metadata_log) note(io.Delete(entry.metadata_file));
  note(io.Delete(metadata_location));
  // Never remove the warehouse or a directory above it, which a registered table could name as
  // its location: other tables live there.
  auto location = io::NormalizeLocation(metadata.location);
  if (location.ok() && *location != warehouse && warehouse.rfind(*location + "/", 0) != 0) {
    note(io.DeleteDir(*location));
  }
  return first;
}

}  // namespace

SqlCatalog::SqlCatalog(SqlCatalogOptions options) : options_(std::move(options)) {}

SqlCatalog::~SqlCatalog() = default;

Result<std::shared_ptr<SqlCatalog>> SqlCatalog::Make(SqlCatalogOptions options) {
  std::shared_ptr<SqlCatalog> catalog(new SqlCatalog(std::move(options)));
  ARROW_RETURN_NOT_OK(catalog->Open());
  return catalog;
}

Status SqlCatalog::Open() {
  if (options_.catalog_name.empty()) return InvalidArgument("SQL catalog: the catalog name must not be empty");
  if (options_.warehouse.empty()) return InvalidArgument("SQL catalog '{}': warehouse is required", options_.catalog_name);
  if (!options_.io) return InvalidArgument("SQL catalog '{}': no FileIO given", options_.catalog_name);
  if (options_.database_path.empty() == options_.postgres_uri.empty()) {
    return InvalidArgument("SQL catalog '{}': give exactly one database (a SQLite path or a PostgreSQL URI)",
                           options_.catalog_name);
  }
  LS_ASSIGN_OR_RAISE_CTX(options_.warehouse, io::NormalizeLocation(options_.warehouse), "SQL catalog '{}': warehouse",
                         options_.catalog_name);
  if (!options_.database_path.empty()) {
    ARROW_ASSIGN_OR_RAISE(db_, sql_internal::SqliteConnection::Open(options_.database_path, options_.busy_timeout_ms));
  } else {
    sql_internal::PostgresOptions pg;
    pg.uri = options_.postgres_uri;
    pg.overrides = options_.postgres_overrides;
    LS_ASSIGN_OR_RAISE_CTX(db_, sql_internal::PostgresConnection::Open(pg), "SQL catalog '{}'", options_.catalog_name);
  }
  LS_RETURN_NOT_OK_CTX(InitTables(), "opening SQL catalog '{}'", name());
  return Status::OK();
}

Status SqlCatalog::InitTables() {
  std::lock_guard lock(mutex_);
  const std::vector<std::string> tables = {"iceberg_tables", "iceberg_namespace_properties"};
  ARROW_ASSIGN_OR_RAISE(auto present, db_->ExistingTables(tables));
  if (present.size() < tables.size()) {
    if (!options_.init_catalog_tables) {
      return NotFound("{} has no iceberg_tables/iceberg_namespace_properties tables and init_catalog_tables is false",
                      db_->description());
    }
    // The transaction (and its init lock) makes two programs initialising one new database at once safe.
    ARROW_ASSIGN_OR_RAISE(auto tx, Transaction::Begin(db_.get()));
    ARROW_RETURN_NOT_OK(db_->LockForInit());
    ARROW_RETURN_NOT_OK(db_->Execute(kCreateTablesTable));
    ARROW_RETURN_NOT_OK(db_->Execute(kCreateNamespacePropertiesTable));
    ARROW_RETURN_NOT_OK(tx.Commit());
  }
  ARROW_ASSIGN_OR_RAISE(has_iceberg_type_, db_->HasColumn("iceberg_tables", "iceberg_type"));
  return Status::OK();
}

std::string SqlCatalog::TypeFilter() const {
  return has_iceberg_type_ ? " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" : "";
}

// ---- namespaces -----------------------------------------------------------------------------

Result<bool> SqlCatalog::NamespaceExistsLocked(const std::string& ns) {
  // LIKE finds candidates the way Java and pyiceberg do; SQLite's LIKE ignores ASCII case, so the
  // exact prefix is checked again with substr (namespace "A" must not exist because of "a.b").
  const std::string prefix = ns + ".";
  const std::vector<Value> params = {options_.catalog_name, ns, sql_internal::EscapeLike(ns) + ".%", prefix};
  ARROW_ASSIGN_OR_RAISE(auto tables, db_->Query("SELECT 1 FROM iceberg_tables WHERE catalog_name = ?1 AND "
                                                "(table_namespace = ?2 OR (table_namespace LIKE ?3 ESCAPE '!' AND "
                                                "substr(table_namespace, 1, length(?4)) = ?4)) LIMIT 1",
                                                params));
  if (!tables.empty()) return true;
  ARROW_ASSIGN_OR_RAISE(auto props, db_->Query("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND "
                                               "(namespace = ?2 OR (namespace LIKE ?3 ESCAPE '!' AND "
                                               "substr(namespace, 1, length(?4)) = ?4)) LIMIT 1",
                                               params));
  return !props.empty();
}

Result<bool> SqlCatalog::NamespaceExists(const Namespace& ns) {
  if (ns.empty()) return true;  // the root always exists
  ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(ns));
  std::lock_guard lock(mutex_);
  return NamespaceExistsLocked(key);
}

Result<std::vector<Namespace>> SqlCatalog::ListNamespaces(const Namespace& parent) {
  std::lock_guard lock(mutex_);
  std::vector<Row> rows;
  const std::string sql_tables = "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?1";
  const std::string sql_props = "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?1";
  if (parent.empty()) {
    ARROW_ASSIGN_OR_RAISE(rows, db_->Query(sql_tables + " UNION " + sql_props, {options_.catalog_name}));
  } else {
    ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(parent));
    ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExistsLocked(key));
    if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", key, name());
    const std::string filter_tables = " AND table_namespace LIKE ?2 ESCAPE '!'";
    const std::string filter_props = " AND namespace LIKE ?2 ESCAPE '!'";
    ARROW_ASSIGN_OR_RAISE(rows, db_->Query(sql_tables + filter_tables + " UNION " + sql_props + filter_props,
                                           {options_.catalog_name, sql_internal::EscapeLike(key) + ".%"}));
  }
  // The direct children: the level after the parent's, from every deeper namespace (exact, case
  // sensitive comparison; LIKE only narrowed the candidates).
  std::set<Namespace> children;
  for (const Row& row : rows) {
    if (!row[0]) continue;
    Namespace ns = SplitNamespace(*row[0]);
    if (ns.size() <= parent.size() || !std::equal(parent.begin(), parent.end(), ns.begin())) continue;
    ns.resize(parent.size() + 1);
    children.insert(std::move(ns));
  }
  return std::vector<Namespace>(children.begin(), children.end());
}

Status SqlCatalog::CreateNamespace(const Namespace& ns, const Properties& properties) {
  ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(ns));
  std::lock_guard lock(mutex_);
  ARROW_ASSIGN_OR_RAISE(auto tx, Transaction::Begin(db_.get()));
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExistsLocked(key));
  if (exists) return AlreadyExists("namespace '{}' already exists in catalog '{}'", key, name());
  Properties rows = properties;
  // Java's JdbcCatalog always stores exists=true; it is what makes an empty namespace visible.
  rows[kExistsProperty] = "true";
  for (const auto& [k, v] : rows) {
    ARROW_RETURN_NOT_OK(db_->Execute("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                                     "property_key, property_value) VALUES (?, ?, ?, ?)",
                                     {options_.catalog_name, key, k, v}));
  }
  return tx.Commit();
}

Result<Properties> SqlCatalog::LoadNamespaceMetadata(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(ns));
  std::lock_guard lock(mutex_);
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExistsLocked(key));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", key, name());
  ARROW_ASSIGN_OR_RAISE(auto rows, db_->Query("SELECT property_key, property_value FROM iceberg_namespace_properties "
                                              "WHERE catalog_name = ? AND namespace = ?",
                                              {options_.catalog_name, key}));
  Properties out;
  for (const Row& row : rows) {
    if (!row[0] || *row[0] == kExistsProperty) continue;
    out[*row[0]] = row[1].value_or("");
  }
  return out;
}

Status SqlCatalog::DropNamespace(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(ns));
  std::lock_guard lock(mutex_);
  ARROW_ASSIGN_OR_RAISE(auto tx, Transaction::Begin(db_.get()));
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExistsLocked(key));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", key, name());
  // Any row in the namespace counts, views included: dropping must not orphan them.
  ARROW_ASSIGN_OR_RAISE(auto tables, db_->Query("SELECT count(*) FROM iceberg_tables WHERE catalog_name = ? AND "
                                                "table_namespace = ?",
                                                {options_.catalog_name, key}));
  if (tables[0][0] && *tables[0][0] != "0") {
    return NamespaceNotEmpty("namespace '{}' is not empty: it holds {} table(s)", key, *tables[0][0]);
  }
  // A child namespace keeps the parent in existence (it exists through its prefix), so dropping
  // the parent would silently do nothing: refuse instead.
  const std::vector<Value> child_params = {options_.catalog_name, sql_internal::EscapeLike(key) + ".%",
                                           key + "."};
  ARROW_ASSIGN_OR_RAISE(auto children,
                        db_->Query("SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?1 AND "
                                   "table_namespace LIKE ?2 ESCAPE '!' AND substr(table_namespace, 1, length(?3)) = ?3 "
                                   "UNION SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?1 "
                                   "AND namespace LIKE ?2 ESCAPE '!' AND substr(namespace, 1, length(?3)) = ?3 LIMIT 1",
                                   child_params));
  if (!children.empty()) {
    return NamespaceNotEmpty("namespace '{}' is not empty: it has child namespace '{}'", key,
                             children[0][0].value_or(""));
  }
  ARROW_RETURN_NOT_OK(db_->Execute("DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?",
                                   {options_.catalog_name, key}));
  return tx.Commit();
}

Status SqlCatalog::UpdateNamespaceProperties(const Namespace& ns, const std::vector<std::string>& removals,
                                             const Properties& updates) {
  ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(ns));
  for (const auto& r : removals) {
    if (updates.count(r)) {
      return InvalidArgument("namespace '{}': property '{}' is both removed and updated", key, r);
    }
  }
  std::lock_guard lock(mutex_);
  ARROW_ASSIGN_OR_RAISE(auto tx, Transaction::Begin(db_.get()));
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExistsLocked(key));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", key, name());
  for (const auto& r : removals) {
    // The hidden marker stays, or an empty namespace would vanish.
    if (r == kExistsProperty) continue;
    ARROW_RETURN_NOT_OK(db_->Execute("DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND "
                                     "namespace = ? AND property_key = ?",
                                     {options_.catalog_name, key, r}));
  }
  for (const auto& [k, v] : updates) {
    ARROW_RETURN_NOT_OK(db_->Execute("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                                     "property_key, property_value) VALUES (?, ?, ?, ?) ON CONFLICT "
                                     "(catalog_name, namespace, property_key) DO UPDATE SET "
                                     "property_value = excluded.property_value",
                                     {options_.catalog_name, key, k, v}));
  }
  // A namespace that existed only through its tables gets its marker row now, so that it keeps
  // its properties (and existence) when those tables go.
  ARROW_RETURN_NOT_OK(db_->Execute("INSERT INTO iceberg_namespace_properties (catalog_name, namespace, "
                                   "property_key, property_value) VALUES (?, ?, ?, 'true') ON CONFLICT "
                                   "(catalog_name, namespace, property_key) DO NOTHING",
                                   {options_.catalog_name, key, kExistsProperty}));
  return tx.Commit();
}

// ---- tables ---------------------------------------------------------------------------------

Result<std::optional<std::string>> SqlCatalog::CurrentMetadataLocationLocked(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(auto rows, db_->Query("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND "
                                              "table_namespace = ? AND table_name = ?" +
                                                  TypeFilter(),
                                              {options_.catalog_name, NamespaceToString(identifier.ns),
                                               identifier.name}));
  if (rows.empty()) return std::nullopt;
  if (!rows[0][0] || rows[0][0]->empty()) {
    return Corrupt("table '{}' in catalog '{}' has no metadata_location in {}", identifier.ToString(), name(),
                   db_->description());
  }
  return rows[0][0];
}

Result<std::optional<std::string>> SqlCatalog::CurrentMetadataLocation(const TableIdentifier& identifier) {
  ARROW_RETURN_NOT_OK(ValidateIdentifier(identifier));
  std::lock_guard lock(mutex_);
  return CurrentMetadataLocationLocked(identifier);
}

Result<bool> SqlCatalog::TableExists(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(auto location, CurrentMetadataLocation(identifier));
  return location.has_value();
}

Result<std::vector<TableIdentifier>> SqlCatalog::ListTables(const Namespace& ns) {
  ARROW_ASSIGN_OR_RAISE(std::string key, NamespaceKey(ns));
  std::lock_guard lock(mutex_);
  ARROW_ASSIGN_OR_RAISE(bool exists, NamespaceExistsLocked(key));
  if (!exists) return NotFound("namespace '{}' does not exist in catalog '{}'", key, name());
  ARROW_ASSIGN_OR_RAISE(auto rows, db_->Query("SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND "
                                              "table_namespace = ?" +
                                                  TypeFilter() + " ORDER BY table_name",
                                              {options_.catalog_name, key}));
  std::vector<TableIdentifier> out;
  for (const Row& row : rows) out.push_back(TableIdentifier{ns, row[0].value_or("")});
  return out;
}

Result<std::string> SqlCatalog::DefaultTableLocation(const TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(Properties ns_props, LoadNamespaceMetadata(identifier.ns));
  if (auto it = ns_props.find("location"); it != ns_props.end() && !it->second.empty()) {
    LS_ASSIGN_OR_RAISE_CTX(std::string ns_location, io::NormalizeLocation(it->second),
                           "namespace '{}' property 'location'", NamespaceToString(identifier.ns));
    return io::JoinLocation(ns_location, identifier.name);
  }
  ARROW_ASSIGN_OR_RAISE(auto ns_location, DefaultNamespaceLocation(identifier.ns));
  return io::JoinLocation(*ns_location, identifier.name);
}

Result<std::optional<std::string>> SqlCatalog::DefaultNamespaceLocation(const Namespace& ns) {
  std::string location = options_.warehouse;
  for (const auto& level : ns) location = io::JoinLocation(location, level);
  return std::optional<std::string>(std::move(location));
}

Result<std::string> SqlCatalog::WriteNextMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                                  const iceberg::TableMetadata& metadata) {
  ARROW_RETURN_NOT_OK(ValidateIdentifier(identifier));
  // Java and pyiceberg number metastore metadata files from 00000 at creation and continue from the
  // number in the previous file's name.
  const int version = base_location.empty() ? 0 : ParseMetadataVersion(base_location) + 1;
  const std::string location = NewMetadataLocation(metadata, version);
  ARROW_ASSIGN_OR_RAISE(std::string encoded, EncodeTableMetadata(metadata));
  ARROW_RETURN_NOT_OK(RecordMetadataFile(location));
  LS_RETURN_NOT_OK_CTX(io()->WriteNew(location, encoded), "writing table metadata");
  return location;
}

Status SqlCatalog::SwapRowLocked(const TableIdentifier& identifier, const std::string& base_location,
                                 const std::string& location) {
  const std::string ns = NamespaceToString(identifier.ns);
  if (base_location.empty()) {
    std::string sql =
        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
        "previous_metadata_location) VALUES (?, ?, ?, ?, NULL)";
    std::vector<Value> params = {options_.catalog_name, ns, identifier.name, location};
    if (has_iceberg_type_) {
      sql = "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
            "previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, ?)";
      params.push_back(std::string(kTableType));
    }
    auto inserted = db_->Execute(sql, params);
    if (!inserted.ok() && KindOf(inserted.status()) == ErrorKind::kAlreadyExists) {
      return AlreadyExists("table '{}' already exists in catalog '{}' (created concurrently)", identifier.ToString(),
                           name());
    }
    return inserted.status();
  }
  ARROW_ASSIGN_OR_RAISE(auto changed,
                        db_->Execute("UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
                                     "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND "
                                     "metadata_location = ?" +
                                         TypeFilter(),
                                     {location, base_location, options_.catalog_name, ns, identifier.name,
                                      base_location}));
  if (changed != 1) {
    return CommitConflict("table '{}' was changed concurrently: its metadata is no longer {}", identifier.ToString(),
                          base_location);
  }
  return Status::OK();
}

Result<std::string> SqlCatalog::SwapMetadata(const TableIdentifier& identifier, const std::string& base_location,
                                             const iceberg::TableMetadata& metadata) {
  ARROW_ASSIGN_OR_RAISE(std::string location, WriteNextMetadata(identifier, base_location, metadata));
  // Every failure below leaves the row as it was (a single autocommit statement is atomic and a
  // failed one is rolled back), so the file just written is garbage and goes.
  std::lock_guard lock(mutex_);
  Status st = SwapRowLocked(identifier, base_location, location);
  if (!st.ok()) {
    // Unless the statement's outcome is unknown (a PostgreSQL connection lost after it was sent):
    // then the row may point at the file already.
    if (KindOf(st) != ErrorKind::kCommitStateUnknown) (void)io()->Delete(location);
    return st;
  }
  return location;
}

Result<std::vector<std::string>> SqlCatalog::SwapMetadataAll(const std::vector<PreparedCommit>& commits) {
  std::vector<std::string> locations;
  auto discard = [&](Status st) {
    // A COMMIT whose connection was lost may have been applied: then the files are the tables' now.
    if (KindOf(st) == ErrorKind::kCommitStateUnknown) return st;
    for (const auto& l : locations) (void)io()->Delete(l);
    return st;
  };
  for (const auto& c : commits) {
    auto location = WriteNextMetadata(c.identifier, c.base ? c.base->metadata_location : "", *c.next);
    if (!location.ok()) return discard(location.status());
    locations.push_back(*location);
  }
  // One write transaction (SQLite: IMMEDIATE; PostgreSQL: row locks, the WHERE re-checked on the
  // row version it waited for): every row swaps or, on the first conflict, none (the
  // destructor rolls back), so the files written are garbage then and go.
  std::lock_guard lock(mutex_);
  auto tx = Transaction::Begin(db_.get());
  if (!tx.ok()) return discard(tx.status());
  for (size_t i = 0; i < commits.size(); ++i) {
    const auto& c = commits[i];
    Status st = SwapRowLocked(c.identifier, c.base ? c.base->metadata_location : "", locations[i]);
    if (!st.ok()) return discard(WithContext(st, "committing to table '" + c.identifier.ToString() + "'"));
  }
  Status committed = tx->Commit();
  if (!committed.ok()) return discard(committed);
  return locations;
}

Status SqlCatalog::DropTable(const TableIdentifier& identifier, bool purge) {
  ARROW_RETURN_NOT_OK(ValidateIdentifier(identifier));
  std::optional<LoadedTable> loaded;
  if (purge) {
    ARROW_ASSIGN_OR_RAISE(auto table, LoadTable(identifier));
    loaded = std::move(table);
  }
  {
    std::lock_guard lock(mutex_);
    std::string sql = "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?" +
                      TypeFilter();
    std::vector<Value> params = {options_.catalog_name, NamespaceToString(identifier.ns), identifier.name};
    if (loaded) {
      // Purge deletes the files of the metadata we loaded; if someone committed since, the row no
      // longer matches and nothing is dropped.
      sql += " AND metadata_location = ?";
      params.push_back(loaded->metadata_location);
    }
    ARROW_ASSIGN_OR_RAISE(int64_t changed, db_->Execute(sql, params));
    if (changed == 0) {
      if (loaded) {
        return CommitConflict("dropping table '{}': it was changed concurrently; reload and retry",
                              identifier.ToString());
      }
      return NotFound("table '{}' does not exist in catalog '{}'", identifier.ToString(), name());
    }
  }
  if (loaded) {
    LS_RETURN_NOT_OK_CTX(PurgeTableFiles(*io(), *loaded->metadata, loaded->metadata_location, options_.warehouse),
                         "table '{}' was dropped, but purging its files failed", identifier.ToString());
  }
  return Status::OK();
}

Status SqlCatalog::RenameTable(const TableIdentifier& from, const TableIdentifier& to) {
  ARROW_RETURN_NOT_OK(ValidateIdentifier(from));
  ARROW_ASSIGN_OR_RAISE(std::string to_ns, NamespaceKey(to.ns));
  if (to.name.empty()) return InvalidArgument("invalid table identifier '{}': empty table name", to.ToString());
  std::lock_guard lock(mutex_);
  ARROW_ASSIGN_OR_RAISE(auto tx, Transaction::Begin(db_.get()));
  ARROW_ASSIGN_OR_RAISE(bool ns_exists, NamespaceExistsLocked(to_ns));
  if (!ns_exists) return NotFound("renaming '{}': namespace '{}' does not exist", from.ToString(), to_ns);
  ARROW_ASSIGN_OR_RAISE(auto current, CurrentMetadataLocationLocked(from));
  if (!current) return NotFound("table '{}' does not exist in catalog '{}'", from.ToString(), name());
  // Any row with the target name blocks, a view included.
  ARROW_ASSIGN_OR_RAISE(auto target, db_->Query("SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
                                                "table_namespace = ? AND table_name = ?",
                                                {options_.catalog_name, to_ns, to.name}));
  if (!target.empty()) return AlreadyExists("renaming '{}': table '{}' already exists", from.ToString(), to.ToString());
  ARROW_RETURN_NOT_OK(db_->Execute("UPDATE iceberg_tables SET table_namespace = ?, table_name = ? WHERE "
                                   "catalog_name = ? AND table_namespace = ? AND table_name = ?" +
                                       TypeFilter(),
                                   {to_ns, to.name, options_.catalog_name, NamespaceToString(from.ns), from.name}));
  return tx.Commit();
}

Result<LoadedTable> SqlCatalog::RegisterTable(const TableIdentifier& identifier, const std::string& metadata_location) {
  ARROW_RETURN_NOT_OK(ValidateIdentifier(identifier));
  ARROW_ASSIGN_OR_RAISE(bool ns_exists, NamespaceExists(identifier.ns));
  if (!ns_exists) {
    return NotFound("registering '{}': namespace '{}' does not exist", identifier.ToString(),
                    NamespaceToString(identifier.ns));
  }
  LS_ASSIGN_OR_RAISE_CTX(auto metadata, ReadTableMetadata(*io(), metadata_location), "registering table '{}'",
                         identifier.ToString());
  std::string sql =
      "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
      "previous_metadata_location) VALUES (?, ?, ?, ?, NULL)";
  std::vector<Value> params = {options_.catalog_name, NamespaceToString(identifier.ns), identifier.name,
                               metadata_location};
  std::lock_guard lock(mutex_);
  if (has_iceberg_type_) {
    sql = "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
          "previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, ?)";
    params.push_back(std::string(kTableType));
  }
  auto inserted = db_->Execute(sql, params);
  if (!inserted.ok()) {
    if (KindOf(inserted.status()) == ErrorKind::kAlreadyExists) {
      return AlreadyExists("registering '{}': the table already exists in catalog '{}'", identifier.ToString(), name());
    }
    return inserted.status();
  }
  return LoadedTable{identifier, metadata_location, metadata, nullptr};
}

}  // namespace lakesync::catalog
