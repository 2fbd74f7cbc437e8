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
// Which keys each catalog type reads is one table, CatalogTypes() (a new type or key is added
// there); FileIO's keys (s3.*, gcs.*, adls.*: io::FileIOPropertyKeys()) are valid for every type.
// Any other key is refused with the closest known key. Properties read here:
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
//   io-impl, py-io-impl          Java's / pyiceberg's FileIO class: accepted for the known classes
//                                (lakesync picks its FileIO from each location's scheme), else kUnsupported.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lakesync/catalog/catalog.h"

namespace YAML {
class Node;
}

namespace lakesync::catalog {

inline constexpr char kDefaultCatalogName[] = "lakesync";

// A catalog type and the properties it reads (besides type, warehouse and the FileIO keys).
struct CatalogTypeInfo {
  std::vector<std::string> names;         // accepted spellings of `type`, canonical first
  std::vector<std::string> keys;          // exact keys
  std::vector<std::string> key_prefixes;  // key families, e.g. "header."
  bool supported = true;                  // false: `type` is known but refused as not available yet
};
const std::vector<CatalogTypeInfo>& CatalogTypes();

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
// named "lakesync", where dir is $LAKESYNC_WAREHOUSE or, when that is unset, lakesync-warehouse in
// `base_dir` (a job file's folder; empty: the current directory), made absolute and created if
// missing. Errors: InvalidArgument when $LAKESYNC_WAREHOUSE is not a local path; IOError when the
// directory cannot be created.
Result<CatalogConfig> DefaultCatalogConfig(const std::string& base_dir = "");

// Makes the local paths among the properties (`warehouse` except for a rest catalog, a SQLite `uri`)
// absolute against `base_dir` rather than the current directory: a job file's catalog is where the
// file says, wherever it is run from. URIs and absolute paths are left as they are.
void ResolveRelativePaths(std::map<std::string, std::string>& catalog_properties, const std::string& base_dir);

// Validates the configuration, makes the FileIO from the same properties and opens the catalog.
// Errors: as ValidateCatalogConfig, FileIO::Make and the catalog's Make.
Result<std::shared_ptr<Catalog>> LoadCatalog(const CatalogConfig& config);

}  // namespace lakesync::catalog
