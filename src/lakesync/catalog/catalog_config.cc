#include "lakesync/catalog/catalog_config.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "lakesync/catalog/filesystem/filesystem_catalog.h"
#include "lakesync/catalog/rest/rest_catalog.h"
#include "lakesync/common/config_keys.h"
#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/text.h"
#include "lakesync/io/file_io.h"

namespace lakesync::catalog {
namespace {

constexpr char kKeyCatalogName[] = "catalog_name";
constexpr char kKeyCatalogProperties[] = "catalog_properties";

constexpr char kPropType[] = "type";
constexpr char kPropWarehouse[] = "warehouse";
constexpr char kPropUri[] = "uri";
constexpr char kPropCatalogImpl[] = "catalog-impl";
constexpr char kPropBusyTimeout[] = "sqlite.busy-timeout-ms";
constexpr char kPropInitCatalogTables[] = "init_catalog_tables";
// Java's JdbcCatalog passes jdbc.* properties to the driver; these two are the ones PostgreSQL needs.
constexpr char kPropJdbcUser[] = "jdbc.user";
constexpr char kPropJdbcPassword[] = "jdbc.password";
constexpr char kPropIoImpl[] = "io-impl";
constexpr char kPropPyIoImpl[] = "py-io-impl";
constexpr char kMemoryDatabase[] = ":memory:";

enum class CatalogType { kSql, kFilesystem, kRest };

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<std::string> Get(const CatalogConfig& config, const char* key) {
  auto it = config.catalog_properties.find(key);
  if (it == config.catalog_properties.end()) return std::nullopt;
  return it->second;
}

const CatalogTypeInfo* FindType(std::string_view name) {
  const std::string lower = AsciiLower(name);
  for (const auto& info : CatalogTypes()) {
    if (std::find(info.names.begin(), info.names.end(), lower) != info.names.end()) return &info;
  }
  return nullptr;
}

std::string TypeNames(bool supported_only) {
  std::string out;
  for (const auto& info : CatalogTypes()) {
    if (supported_only && !info.supported) continue;
    for (const auto& n : info.names) out += (out.empty() ? "" : ", ") + n;
  }
  return out;
}

Result<const CatalogTypeInfo*> TypeInfoOf(const CatalogConfig& config) {
  if (Get(config, kPropCatalogImpl)) {
    return Unsupported(
        "catalog '{}': catalog_properties.{} names a Java class, which lakesync cannot load; set "
        "catalog_properties.type instead ({})",
        config.catalog_name, kPropCatalogImpl, TypeNames(true));
  }
  auto type = Get(config, kPropType);
  if (!type || type->empty()) {
    return InvalidArgument("catalog '{}': catalog_properties.type is required (one of: {})", config.catalog_name,
                           TypeNames(true));
  }
  const CatalogTypeInfo* info = FindType(*type);
  if (!info) {
    return InvalidArgument("catalog '{}': catalog_properties.type '{}' is not a catalog type (one of: {})",
                           config.catalog_name, *type, TypeNames(true));
  }
  if (!info->supported) {
    return Unsupported("catalog '{}': catalog_properties.type '{}' is not supported yet (use {})", config.catalog_name,
                       *type, TypeNames(true));
  }
  return info;
}

Result<CatalogType> TypeOf(const CatalogConfig& config) {
  ARROW_ASSIGN_OR_RAISE(const CatalogTypeInfo* info, TypeInfoOf(config));
  if (info->names.front() == "sql") return CatalogType::kSql;
  if (info->names.front() == "hadoop") return CatalogType::kFilesystem;
  if (info->names.front() == "rest") return CatalogType::kRest;
  return Unsupported("catalog '{}': catalog type '{}' has no implementation", config.catalog_name, info->names.front());
}

// Java FileIO classes name how Java reaches storage; lakesync picks its FileIO from each location's
// scheme, so these are accepted as the no-op they are here. Any other class is refused by name.
bool IsKnownIoImpl(std::string_view value) {
  static const std::vector<std::string> known = {
      "org.apache.iceberg.aws.s3.S3FileIO",       "org.apache.iceberg.gcp.gcs.GCSFileIO",
      "org.apache.iceberg.azure.adlsv2.ADLSFileIO", "org.apache.iceberg.hadoop.HadoopFileIO",
      "org.apache.iceberg.io.ResolvingFileIO",    "pyiceberg.io.pyarrow.PyArrowFileIO",
      "pyiceberg.io.fsspec.FsspecFileIO"};
  return std::find(known.begin(), known.end(), value) != known.end();
}

// Every key must be one this catalog type reads (its own table in CatalogTypes(), the keys of all
// types, or a FileIO key); a typo is refused with the closest known key.
Status CheckPropertyKeys(const CatalogConfig& config, const CatalogTypeInfo& info) {
  std::vector<std::string> known = {kPropType, kPropWarehouse, kPropIoImpl, kPropPyIoImpl};
  known.insert(known.end(), info.keys.begin(), info.keys.end());
  const auto& io_keys = io::FileIOPropertyKeys();
  known.insert(known.end(), io_keys.begin(), io_keys.end());
  for (const auto& [key, value] : config.catalog_properties) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (std::any_of(info.key_prefixes.begin(), info.key_prefixes.end(),
                    [&](const std::string& p) { return StartsWith(key, p); })) {
      continue;
    }
    std::string hint;
    if (auto close = ClosestKey(key, known)) {
      hint = fmt::format("; did you mean '{}'?", *close);
    } else {
      hint = fmt::format(" for a {} catalog (its keys: {}; and the storage keys s3.*, gcs.*, adls.*)",
                         info.names.front(), fmt::join(info.keys, ", "));
    }
    return InvalidArgument("catalog '{}': unknown key catalog_properties.{}{}", config.catalog_name, key, hint);
  }
  for (const char* key : {kPropIoImpl, kPropPyIoImpl}) {
    if (auto v = Get(config, key); v && !IsKnownIoImpl(*v)) {
      return Unsupported("catalog '{}': catalog_properties.{} '{}' is not a FileIO lakesync knows; lakesync chooses "
                         "its storage client from each location's scheme, so leave {} out",
                         config.catalog_name, key, *v, key);
    }
  }
  return Status::OK();
}

Result<std::string> AbsoluteLocalPath(std::string_view path, std::string_view uri) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(std::filesystem::path(std::string(path)), ec);
  if (ec) return InvalidArgument("catalog_properties.uri '{}': cannot make '{}' absolute: {}", uri, path, ec.message());
  return p.lexically_normal().string();
}

bool IsPostgresUri(const std::string& uri) {
  const std::string lower = AsciiLower(uri);
  return StartsWith(lower, "postgresql:") || StartsWith(lower, "postgresql+") || StartsWith(lower, "postgres:") ||
         StartsWith(lower, "jdbc:postgresql:");
}

// A URI for messages: passwords (user:password@ and password=...) replaced by ***.
std::string Redacted(const std::string& uri) {
  std::string out = uri;
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t at = out.find('@', scheme + 3);
    const size_t colon = out.find(':', scheme + 3);
    if (at != std::string::npos && colon != std::string::npos && colon < at) {
      out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  for (size_t p = AsciiLower(out).find("password="); p != std::string::npos; p = AsciiLower(out).find("password=", p + 1)) {
    const size_t end = out.find('&', p);
    out.replace(p + 9, (end == std::string::npos ? out.size() : end) - p - 9, "***");
  }
  return out;
}

// The libpq URI a PostgreSQL `uri` names. Accepted spellings: libpq's own
// (postgresql://user:pw@host:port/db?sslmode=require, postgres://...), SQLAlchemy's as pyiceberg takes
// it (postgresql+psycopg2://..., any +driver), and JDBC's as Java's JdbcCatalog takes it
// (jdbc:postgresql://host:port/db?user=x&password=y). Errors: InvalidArgument naming the uri.
Result<std::string> PostgresUri(const std::string& uri) {
  const std::string shown = Redacted(uri);
  std::string rest = uri;
  const std::string lower = AsciiLower(uri);
  if (StartsWith(lower, "jdbc:")) rest = uri.substr(5);
  const std::string rest_lower = AsciiLower(rest);
  const size_t scheme_end = rest.find("://");
  if (scheme_end == std::string::npos) {
    return InvalidArgument("catalog_properties.uri '{}': expected postgresql://[user@]host[:port]/database", shown);
  }
  std::string scheme = rest_lower.substr(0, scheme_end);
  if (const size_t plus = scheme.find('+'); plus != std::string::npos) scheme = scheme.substr(0, plus);
  if (scheme != "postgresql" && scheme != "postgres") {
    return InvalidArgument("catalog_properties.uri '{}': '{}' is not a PostgreSQL scheme", shown, scheme);
  }
  const std::string after = rest.substr(scheme_end + 3);
  if (after.empty() || after.front() == '/' || after.find('/') == std::string::npos ||
      after.substr(after.find('/') + 1).empty() || after.substr(after.find('/') + 1).front() == '?') {
    return InvalidArgument("catalog_properties.uri '{}': name the server and the database "
                           "(postgresql://[user@]host[:port]/database)",
                           shown);
  }
  return "postgresql://" + after;
}

// The SQLite database a `uri` names: an absolute path, or ":memory:".
Result<std::string> SqliteDatabasePath(const std::string& uri) {
  const std::string lower = AsciiLower(uri);
  if (uri.find('?') != std::string::npos) {
    return InvalidArgument("catalog_properties.uri '{}': query parameters are not supported", uri);
  }
  std::string rest;
  if (StartsWith(lower, "jdbc:sqlite:")) {
    rest = uri.substr(std::string_view("jdbc:sqlite:").size());
    if (rest.empty() || rest == kMemoryDatabase) return std::string(kMemoryDatabase);
    if (StartsWith(AsciiLower(rest), "file:")) {
      auto normalized = io::NormalizeLocation(rest);
      if (!normalized.ok()) {
        return InvalidArgument("catalog_properties.uri '{}': {}", uri, normalized.status().message());
      }
      auto parsed = io::ParseLocation(*normalized);
      if (!parsed.ok() || parsed->kind != io::StorageKind::kLocal) {
        return InvalidArgument("catalog_properties.uri '{}': not a local file", uri);
      }
      return parsed->path;
    }
    return AbsoluteLocalPath(rest, uri);
  }
  for (std::string_view scheme : {"sqlite://", "sqlite+pysqlite://"}) {
    if (!StartsWith(lower, scheme)) continue;
    rest = uri.substr(scheme.size());
    if (rest.empty()) return std::string(kMemoryDatabase);  // "sqlite://"
    if (rest.front() != '/') {
      return InvalidArgument(
          "catalog_properties.uri '{}': a SQLite URI has no host; write sqlite:////abs/path.db (absolute) or "
          "sqlite:///relative/path.db",
          uri);
    }
    rest.erase(0, 1);  // SQLAlchemy: everything after "sqlite:///" is the path as given.
    if (rest.empty() || rest == kMemoryDatabase) return std::string(kMemoryDatabase);
    return AbsoluteLocalPath(rest, uri);
  }
  return InvalidArgument(
      "catalog_properties.uri '{}' is not a SQLite URI (expected sqlite:////abs/path.db, sqlite:///rel/path.db, "
      "sqlite:///:memory: or jdbc:sqlite:/abs/path.db)",
      uri);
}

Result<bool> BoolProperty(const CatalogConfig& config, const char* key, bool fallback) {
  auto value = Get(config, key);
  if (!value) return fallback;
  const std::string v = AsciiLower(*value);
  if (v == "true") return true;
  if (v == "false") return false;
  return InvalidArgument("catalog '{}': catalog_properties.{} must be true or false, got '{}'", config.catalog_name,
                         key, *value);
}

Result<int> IntProperty(const CatalogConfig& config, const char* key, int fallback) {
  auto value = Get(config, key);
  if (!value) return fallback;
  int out = 0;
  auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), out);
  if (value->empty() || ec != std::errc() || end != value->data() + value->size() || out < 0) {
    return InvalidArgument("catalog '{}': catalog_properties.{} must be a non-negative integer, got '{}'",
                           config.catalog_name, key, *value);
  }
  return out;
}

Result<std::string> Warehouse(const CatalogConfig& config) {
  auto warehouse = Get(config, kPropWarehouse);
  if (!warehouse || warehouse->empty()) {
    return InvalidArgument("catalog '{}': catalog_properties.warehouse is required", config.catalog_name);
  }
  auto normalized = io::NormalizeLocation(*warehouse);
  if (!normalized.ok()) {
    return InvalidArgument("catalog '{}': catalog_properties.warehouse '{}' is malformed: {}", config.catalog_name,
                           *warehouse, normalized.status().message());
  }
  return *normalized;
}

Result<std::string> ScalarValue(const YAML::Node& node, std::string_view key, std::string_view source) {
  if (!node.IsScalar()) {
    return InvalidArgument("{}: {} must be a single value, not a {}", source, key,
                           node.IsMap() ? "map" : node.IsSequence() ? "list" : "null");
  }
  return node.Scalar();
}

Result<CatalogConfig> FromYaml(const YAML::Node& node, std::string_view source, bool strict) {
  CatalogConfig config;
  if (!node.IsMap()) {
    if (node.IsNull()) {
      return InvalidArgument("{} is empty: expected the keys {} and {}", source, kKeyCatalogName, kKeyCatalogProperties);
    }
    return InvalidArgument("{}: expected a map with the keys {} and {}", source, kKeyCatalogName,
                           kKeyCatalogProperties);
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (key == kKeyCatalogName) {
      ARROW_ASSIGN_OR_RAISE(config.catalog_name, ScalarValue(entry.second, key, source));
      if (config.catalog_name.empty()) return InvalidArgument("{}: {} must not be empty", source, key);
    } else if (key == kKeyCatalogProperties) {
      if (entry.second.IsNull()) continue;
      if (!entry.second.IsMap()) return InvalidArgument("{}: {} must be a map of property names to values", source, key);
      for (const auto& prop : entry.second) {
        const std::string name = prop.first.as<std::string>();
        ARROW_ASSIGN_OR_RAISE(std::string value,
                              ScalarValue(prop.second, fmt::format("{}.{}", kKeyCatalogProperties, name), source));
        config.catalog_properties[name] = std::move(value);
      }
    } else if (strict) {
      return InvalidArgument("{}: unknown key '{}' (allowed: {}, {})", source, key, kKeyCatalogName,
                             kKeyCatalogProperties);
    }
  }
  return config;
}

}  // namespace

Result<CatalogConfig> CatalogConfigFromYaml(const YAML::Node& node, std::string_view source) {
  try {
    return FromYaml(node, source, /*strict=*/false);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("{}: {}", source, e.what());
  }
}

Result<CatalogConfig> ParseCatalogConfig(std::string_view yaml_text, std::string_view source) {
  Result<CatalogConfig> config;
  try {
    YAML::Node node = YAML::Load(std::string(yaml_text));
    config = FromYaml(node, source, /*strict=*/true);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("{}: malformed YAML: {}", source, e.what());
  }
  ARROW_RETURN_NOT_OK(config.status());
  LS_RETURN_NOT_OK_CTX(ValidateCatalogConfig(*config), "{}", source);
  return config;
}

Result<CatalogConfig> LoadCatalogConfigFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("catalog configuration file {} does not exist", path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return IOError("reading catalog configuration file {}", path);
  return ParseCatalogConfig(text.str(), path);
}

const std::vector<CatalogTypeInfo>& CatalogTypes() {
  // One entry per catalog type: the names `type` accepts (the first is the canonical one), the keys
  // it reads besides type, warehouse and the FileIO keys, and key prefixes it accepts as a family.
  // A new catalog type (or a new key of one) is added here and nowhere else.
  static const std::vector<CatalogTypeInfo> types = {
      {{"sql", "jdbc"}, {kPropUri, kPropBusyTimeout, kPropInitCatalogTables, kPropJdbcUser, kPropJdbcPassword}, {}, true},
      {{"hadoop", "filesystem"}, {kPropAllowUnsafeObjectStoreCommits}, {}, true},
      {{"rest"},
       std::vector<std::string>(rest::RestClientPropertyNames().begin(), rest::RestClientPropertyNames().end()),
       {rest::kPropHeaderPrefix},
       true},
      {{"hive"}, {kPropUri}, {}, false},
      {{"glue"}, {}, {}, false},
      {{"nessie"}, {kPropUri}, {}, false},
  };
  return types;
}

Status ValidateCatalogConfig(const CatalogConfig& config) {
  if (config.catalog_name.empty()) return InvalidArgument("catalog_name must not be empty");
  ARROW_ASSIGN_OR_RAISE(const CatalogTypeInfo* info, TypeInfoOf(config));
  ARROW_RETURN_NOT_OK(CheckPropertyKeys(config, *info));
  ARROW_ASSIGN_OR_RAISE(CatalogType type, TypeOf(config));
  // A REST catalog's warehouse is optional: a name or location the server interprets.
  if (type == CatalogType::kRest) return rest::ValidateRestProperties(config.catalog_name, config.catalog_properties);
  ARROW_RETURN_NOT_OK(Warehouse(config).status());
  if (type == CatalogType::kSql) {
    auto uri = Get(config, kPropUri);
    if (!uri || uri->empty()) {
      return InvalidArgument("catalog '{}': catalog_properties.uri is required for a sql catalog (e.g. "
                             "sqlite:////abs/path/catalog.db)",
                             config.catalog_name);
    }
    if (IsPostgresUri(*uri)) {
      LS_RETURN_NOT_OK_CTX(PostgresUri(*uri).status(), "catalog '{}'", config.catalog_name);
    } else {
      LS_RETURN_NOT_OK_CTX(SqliteDatabasePath(*uri).status(), "catalog '{}'", config.catalog_name);
    }
    ARROW_RETURN_NOT_OK(IntProperty(config, kPropBusyTimeout, 0).status());
    ARROW_RETURN_NOT_OK(BoolProperty(config, kPropInitCatalogTables, true).status());
  } else {
    ARROW_RETURN_NOT_OK(BoolProperty(config, kPropAllowUnsafeObjectStoreCommits, false).status());
  }
  return Status::OK();
}

void ResolveRelativePaths(std::map<std::string, std::string>& props, const std::string& base_dir) {
  if (base_dir.empty()) return;
  // A REST catalog's warehouse is a name or location the server interprets, not a local path.
  auto type = props.find(kPropType);
  const bool rest = type != props.end() && AsciiLower(type->second) == "rest";
  if (auto it = props.find(kPropWarehouse); it != props.end() && !rest) {
    it->second = io::ResolveRelativePath(it->second, base_dir);
  }
  auto it = props.find(kPropUri);
  if (it == props.end()) return;
  std::string& uri = it->second;
  const std::string lower = AsciiLower(uri);
  // sqlite:///rel/x.db (three slashes: relative) and jdbc:sqlite:rel/x.db name files relative to
  // the current directory; memory databases and absolute paths stay as they are.
  for (std::string_view scheme : {"sqlite:///", "sqlite+pysqlite:///"}) {
    if (!StartsWith(lower, scheme)) continue;
    const std::string rest = uri.substr(scheme.size());
    if (rest.empty() || rest.front() == '/' || rest == kMemoryDatabase) return;
    uri = uri.substr(0, scheme.size()) + io::ResolveRelativePath(rest, base_dir);
    return;
  }
  if (StartsWith(lower, "jdbc:sqlite:")) {
    const std::string rest = uri.substr(std::string_view("jdbc:sqlite:").size());
    if (rest.empty() || rest.front() == '/' || rest == kMemoryDatabase || StartsWith(AsciiLower(rest), "file:")) return;
    uri = "jdbc:sqlite:" + io::ResolveRelativePath(rest, base_dir);
  }
}

Result<CatalogConfig> DefaultCatalogConfig(const std::string& base_dir) {
  const char* env = std::getenv("LAKESYNC_WAREHOUSE");
  const std::string given =
      env && *env ? std::string(env) : io::ResolveRelativePath("lakesync-warehouse", base_dir);
  auto location = io::NormalizeLocation(given);
  if (!location.ok()) {
    return InvalidArgument("LAKESYNC_WAREHOUSE '{}' is not a usable directory: {}", given, location.status().message());
  }
  ARROW_ASSIGN_OR_RAISE(auto parsed, io::ParseLocation(*location));
  if (parsed.kind != io::StorageKind::kLocal) {
    return InvalidArgument("LAKESYNC_WAREHOUSE '{}' must be a local directory: the default catalog keeps its SQLite "
                           "database there (configure a catalog to use an object store)",
                           given);
  }
  std::error_code ec;
  std::filesystem::create_directories(parsed.path, ec);
  if (ec) return IOError("creating the default warehouse directory {}: {}", parsed.path, ec.message());
  CatalogConfig config;
  config.catalog_name = kDefaultCatalogName;
  config.catalog_properties = {
      {kPropType, "sql"},
      {kPropUri, "sqlite:///" + (std::filesystem::path(parsed.path) / "catalog.db").string()},
      {kPropWarehouse, *location},
  };
  return config;
}

Result<std::shared_ptr<Catalog>> LoadCatalog(const CatalogConfig& config) {
  ARROW_RETURN_NOT_OK(ValidateCatalogConfig(config));
  ARROW_ASSIGN_OR_RAISE(CatalogType type, TypeOf(config));
  if (type == CatalogType::kRest) {
    // The REST client makes its FileIO from the properties merged with the server's config.
    ARROW_ASSIGN_OR_RAISE(auto catalog, rest::RestCatalog::Make(config.catalog_name, config.catalog_properties));
    return std::static_pointer_cast<Catalog>(catalog);
  }
  ARROW_ASSIGN_OR_RAISE(std::string warehouse, Warehouse(config));
  LS_ASSIGN_OR_RAISE_CTX(auto io, io::FileIO::Make(config.catalog_properties), "catalog '{}'", config.catalog_name);
  if (type == CatalogType::kSql) {
    SqlCatalogOptions options;
    options.catalog_name = config.catalog_name;
    const std::string uri = *Get(config, kPropUri);
    if (IsPostgresUri(uri)) {
      ARROW_ASSIGN_OR_RAISE(options.postgres_uri, PostgresUri(uri));
      if (auto user = Get(config, kPropJdbcUser)) options.postgres_overrides["user"] = *user;
      if (auto password = Get(config, kPropJdbcPassword)) options.postgres_overrides["password"] = *password;
    } else {
      ARROW_ASSIGN_OR_RAISE(options.database_path, SqliteDatabasePath(uri));
    }
    ARROW_ASSIGN_OR_RAISE(options.init_catalog_tables, BoolProperty(config, kPropInitCatalogTables, true));
    if (options.postgres_uri.empty() && options.init_catalog_tables && options.database_path != kMemoryDatabase) {
      // A catalog that may create its tables may create its folder too (a job's catalog next to the
      // job file, on a first run).
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(options.database_path).parent_path(), ec);
      if (ec) return IOError("creating the folder of SQLite catalog {}: {}", options.database_path, ec.message());
    }
    options.warehouse = warehouse;
    options.io = io;
    ARROW_ASSIGN_OR_RAISE(options.busy_timeout_ms, IntProperty(config, kPropBusyTimeout, options.busy_timeout_ms));
    ARROW_ASSIGN_OR_RAISE(auto catalog, SqlCatalog::Make(std::move(options)));
    return std::static_pointer_cast<Catalog>(catalog);
  }
  FilesystemCatalogOptions options;
  options.catalog_name = config.catalog_name;
  options.warehouse = warehouse;
  options.io = io;
  ARROW_ASSIGN_OR_RAISE(options.allow_unsafe_object_store_commits,
                        BoolProperty(config, kPropAllowUnsafeObjectStoreCommits, false));
  ARROW_ASSIGN_OR_RAISE(auto catalog, FilesystemCatalog::Make(std::move(options)));
  return std::static_pointer_cast<Catalog>(catalog);
}

}  // namespace lakesync::catalog
