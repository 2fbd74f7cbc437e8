// Named catalogs, as pyiceberg keeps them in ~/.pyiceberg.yaml: one file (LAKESYNC_CONFIG, else
// ~/.lakesync.yaml) lists catalogs by name, and commands pick one with --catalog NAME.
//
//   default-catalog: prod          # optional: used when a command names no catalog
//   catalog:
//     prod:
//       type: sql
//       uri: sqlite:////srv/lakesync/catalog.db
//       warehouse: s3://lake/warehouse
//       s3.endpoint: http://127.0.0.1:9000
//
// Environment variables override or add properties with pyiceberg's convention:
// LAKESYNC_CATALOG__<NAME>__<PROP>, names case-insensitive, where a double underscore in PROP is a
// '.' and a single one a '-' (LAKESYNC_CATALOG__PROD__S3__ACCESS_KEY_ID sets s3.access-key-id of
// catalog "prod"). A catalog may be defined by environment variables alone.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/catalog/catalog_config.h"

namespace lakesync::catalog {

struct NamedCatalogs {
  std::string source;  // the file read ("" when there was none), for messages
  std::optional<std::string> default_catalog;
  std::map<std::string, CatalogConfig> catalogs;  // by lower-case name
};

// The environment as name/value pairs (tests pass their own).
using EnvironmentList = std::vector<std::pair<std::string, std::string>>;
EnvironmentList ProcessEnvironment();

// Reads the file named by LAKESYNC_CONFIG (an error if it is missing), else ~/.lakesync.yaml when it
// exists, then applies the LAKESYNC_CATALOG__* variables of `env`. No file and no variables is an
// empty result, not an error. Errors: InvalidArgument naming the file and key for malformed YAML,
// unknown top-level keys (with did-you-mean), a catalog that is not a map; NotFound for a missing
// LAKESYNC_CONFIG file. Properties are validated when a catalog is chosen (ResolveNamedCatalog).
Result<NamedCatalogs> LoadNamedCatalogs(const EnvironmentList& env = ProcessEnvironment());

// The catalog called `name` (case-insensitive), validated. Errors: NotFound listing the known names
// (and the closest one); then as ValidateCatalogConfig, naming the catalog and the file.
Result<CatalogConfig> ResolveNamedCatalog(const NamedCatalogs& catalogs, const std::string& name);

}  // namespace lakesync::catalog
