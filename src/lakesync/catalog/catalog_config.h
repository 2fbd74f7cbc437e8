// Catalog configuration: a catalog name and the Iceberg catalog properties, with the same keys as
// Apache Beam's Managed I/O (`catalog_name`, `catalog_properties`), parsed from YAML, validated,
// and turned into a Catalog.
//
//   catalog_name: lakesync
//   catalog_properties:
//     type: sql                          # sql (alias jdbc) | hadoop (alias filesystem) | rest; hive: not yet
//     uri: sqlite:////abs/path/catalog.db
//     warehouse: file:///abs/path/warehouse
//
// Properties read here (all others are passed on to FileIO, e.g. s3.*, gcs.*, adls.*):
//   type       required, case-insensitive. `sql`/`jdbc`, `hadoop`/`filesystem`, `rest` (the REST client's
//              properties are listed in rest/rest_catalog.h); `hive`, `glue`, `nessie` are kUnsupported
//              for now; `catalog-impl` (a Java class) is kUnsupported.
//   warehouse  required (optional for rest). Where new tables go (a local path or file://, s3://, gs://,
//              abfs(s):// URI).
//   uri        `sql` only, required. SQLAlchemy spelling as pyiceberg takes it: `sqlite:////abs/x.db`
//              (four slashes: absolute), `sqlite:///rel/x.db` (relative to the working directory),
//              `sqlite:///:memory:` or `sqlite://` (private in-memory database); or Java's
//              `jdbc:sqlite:/abs/x.db`, `jdbc:sqlite:rel/x.db`, `jdbc:sqlite::memory:`.
//              PostgreSQL: `postgresql://user[:password]@host[:port]/db[?sslmode=...]` (libpq's URI;
//              also `postgres://`, SQLAlchemy's `postgresql+psycopg2://…` and Java's
//              `jdbc:postgresql://host:port/db?user=…&password=…`).
//   jdbc.user, jdbc.password     `sql` on PostgreSQL (Java's keys): override the URI's user/password.
//   sqlite.busy-timeout-ms       `sql`, default 30000: how long to wait for another process's lock.
//   init_catalog_tables          `sql`, default true (pyiceberg's key): create missing catalog tables.
//   filesystem.allow-unsafe-object-store-commits   `hadoop`, default false (see filesystem_catalog.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "lakesync/catalog/catalog.h"

namespace YAML {
class Node;
}

namespace lakesync::catalog {

inline constexpr char kDefaultCatalogName[] = "lakesync";

struct CatalogConfig {
  std::string catalog_name = kDefaultCatalogName;
  std::map<std::string, std::string> catalog_properties;
};

// Parses a YAML document holding exactly the keys catalog_name (default "lakesync") and
// catalog_properties (a map of scalars). `source` names the document in errors (a file path).
// Errors: InvalidArgument naming the key and the source for unknown keys, non-scalar values,
// malformed YAML; the properties are validated as by ValidateCatalogConfig.
Result<CatalogConfig> ParseCatalogConfig(std::string_view yaml_text, std::string_view source);
// Reads and parses a file. Errors: NotFound / IOError naming the path, then as ParseCatalogConfig.
Result<CatalogConfig> LoadCatalogConfigFile(const std::string& path);

// Reads catalog_name and catalog_properties from a YAML map that may hold other keys too (a job
// file: the caller validates its own keys). Does not validate the properties.
Result<CatalogConfig> CatalogConfigFromYaml(const YAML::Node& node, std::string_view source);

// Checks the properties listed at the top of this file. Errors: InvalidArgument naming the key
// (missing or malformed `type`, `warehouse`, `uri`, ...); Unsupported for catalog types and
// databases lakesync does not offer yet.
Status ValidateCatalogConfig(const CatalogConfig& config);

// The embedded default: a SQL catalog on SQLite at <dir>/catalog.db with warehouse file://<dir>,
// named "lakesync", where dir is $LAKESYNC_WAREHOUSE or ./lakesync-warehouse, made absolute and
// created if missing. Errors: InvalidArgument when $LAKESYNC_WAREHOUSE is not a local path;
// IOError when the directory cannot be created.
Result<CatalogConfig> DefaultCatalogConfig();

// Validates the configuration, makes the FileIO from the same properties and opens the catalog.
// Errors: as ValidateCatalogConfig, FileIO::Make and the catalog's Make.
Result<std::shared_ptr<Catalog>> LoadCatalog(const CatalogConfig& config);

}  // namespace lakesync::catalog
