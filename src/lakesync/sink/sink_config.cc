#include "lakesync/sink/sink_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lakesync/common/text.h"
#include "lakesync/common/yaml_json.h"
#include "lakesync/sink/sink_config_internal.h"
#include "lakesync/sink/table_template.h"

namespace lakesync::sink {
namespace {

using namespace internal;  // NOLINT: this file and the internal header are one unit

Status WithSource(const Status& status, std::string_view source) {
  return source.empty() ? status : WithContext(status, source);
}

// ---- checks across keys ----

bool IsSet(const SinkConfig& config, const KeySpec& spec) {
  if (config.is_given(spec.key)) return true;
  if (!spec.emit) return false;
  // A config assembled in code has no given_keys; a value that differs from the default is set.
  static const SinkConfig kDefaults;
  Json mine = Json::object(), defaults = Json::object();
  spec.emit(config, spec.key, mine);
  spec.emit(kDefaults, spec.key, defaults);
  return mine != defaults;
}

bool AppliesTo(Modes modes, WriteMode mode) {
  return modes == Modes::kBoth || (modes == Modes::kAppend) == (mode == WriteMode::kAppend);
}

Status CheckModeOptions(const SinkConfig& config) {
  std::vector<std::string> unsupported;
  for (const auto& spec : Specs()) {
    if (!AppliesTo(spec.modes, config.mode) && IsSet(config, spec)) unsupported.push_back(spec.key);
  }
  if (unsupported.empty()) return Status::OK();
  const WriteMode other = config.mode == WriteMode::kAppend ? WriteMode::kMergeOnRead : WriteMode::kAppend;
  return InvalidArgument("The following options are not supported in '{}' mode: [{}] (they apply only in '{}' mode)",
                         WriteModeName(config.mode), fmt::join(unsupported, ", "), WriteModeName(other));
}

bool Contains(const StringList& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// True when `entry` is `path` or one of its enclosing records ("a" for "a.b").
bool Covers(std::string_view entry, std::string_view path) {
  return path == entry || (StartsWith(path, entry) && path.size() > entry.size() && path[entry.size()] == '.');
}

Status CheckProjection(const SinkConfig& config) {
  std::vector<std::string> given;
  if (config.keep) given.push_back("keep");
  if (config.drop) given.push_back("drop");
  if (config.only) given.push_back("only");
  if (given.size() > 1) {
    return InvalidArgument("keep, drop and only are mutually exclusive; given: {}", fmt::join(given, ", "));
  }
  if (config.mode != WriteMode::kMergeOnRead) return Status::OK();
  // Merge-on-read needs the key and the routing columns in the rows it writes. Nothing is known
  // about the fields inside `only` until the schema is, so that case is left to the writer.
  for (const auto& column : config.equality_columns) {
    if (config.drop && Contains(*config.drop, column)) {
      return InvalidArgument("equality_columns: '{}' is removed by drop, so rows could not be matched by key", column);
    }
    if (config.keep && !Contains(*config.keep, column)) {
      return InvalidArgument("equality_columns: '{}' is not listed in keep, so rows could not be matched by key",
                             column);
    }
  }
  for (const auto& placeholder : TemplatePlaceholders(config.table)) {
    const auto covers = [&](const std::string& entry) { return Covers(entry, placeholder); };
    if (config.drop && std::any_of(config.drop->begin(), config.drop->end(), covers)) {
      return InvalidArgument("table '{}': the placeholder {{{}}} names a field that drop removes", config.table,
                             placeholder);
    }
    if (config.keep && std::none_of(config.keep->begin(), config.keep->end(), covers)) {
      return InvalidArgument("table '{}': the placeholder {{{}}} names a field that keep does not keep", config.table,
                             placeholder);
    }
  }
  return Status::OK();
}

Status CheckControlColumns(const SinkConfig& config) {
  if ((config.is_given(kKeyChangeTypeMap) || !config.change_type_map.empty()) && !config.change_type_column) {
    return InvalidArgument("{} needs {}: the map translates that column's values", kKeyChangeTypeMap,
                           kKeyChangeTypeColumn);
  }
  if (config.change_type_column && *config.change_type_column == config.sequence_number_column) {
    return InvalidArgument("{} and {} must name different columns; both are '{}'", kKeySequenceNumberColumn,
                           kKeyChangeTypeColumn, config.sequence_number_column);
  }
  if (config.mode != WriteMode::kMergeOnRead) return Status::OK();
  for (const auto& column : config.equality_columns) {
    if (column == config.sequence_number_column) {
      return InvalidArgument("{}: '{}' is the {}, which is removed before writing", kKeyEqualityColumns, column,
                             kKeySequenceNumberColumn);
    }
    if (config.change_type_column && column == *config.change_type_column) {
      return InvalidArgument("{}: '{}' is the {}, which is removed before writing", kKeyEqualityColumns, column,
                             kKeyChangeTypeColumn);
    }
  }
  return Status::OK();
}

Status CheckShards(const SinkConfig& config) {
  if (config.shards_per_partition && *config.shards_per_partition > config.num_shards) {
    return InvalidArgument("{} must be between 1 and {} ({}), got {}", kKeyShardsPerPartition, kKeyNumShards,
                           config.num_shards, *config.shards_per_partition);
  }
  return Status::OK();
}

Status CheckTableCacheOptions(const SinkConfig& config) {
  bool cache_enabled = false;
  std::vector<std::string> sub_options;
  for (const auto& ignored : config.ignored_options) {
    if (ignored.key == kKeyUseSideInputTableCache) {
      cache_enabled = ignored.value.is_boolean() ? ignored.value.get<bool>() : AsciiLower(ignored.value.get<std::string>()) == "true";
    }
    for (const char* sub : kTableCacheSubOptions) {
      if (ignored.key == sub) sub_options.push_back(sub);
    }
  }
  if (cache_enabled || sub_options.empty()) return Status::OK();
  // Beam's message names keys that do not exist; this one names the real ones.
  return InvalidArgument("{} can only be set together with {}: true; given without it: [{}]",
                         fmt::join(kTableCacheSubOptions, ", "), kKeyUseSideInputTableCache,
                         fmt::join(sub_options, ", "));
}

Status CheckCatalog(const SinkConfig& config) {
  if (!config.is_given(kKeyCatalogProperties) && config.catalog_properties.empty()) return Status::OK();
  return catalog::ValidateCatalogConfig(*config.catalog());
}

Status Validate(const SinkConfig& config) {
  if (config.table.empty()) {
    if (config.is_given(kKeyTable)) return InvalidArgument("table must not be empty");
    return InvalidArgument("table is required (NAMESPACE.TABLE or a template such as db.orders_{{region}})");
  }
  for (const auto& spec : Specs()) {
    if (spec.check) ARROW_RETURN_NOT_OK(spec.check(config, spec.key));
  }
  ARROW_RETURN_NOT_OK(CheckModeOptions(config));
  ARROW_RETURN_NOT_OK(CheckProjection(config));
  ARROW_RETURN_NOT_OK(CheckControlColumns(config));
  ARROW_RETURN_NOT_OK(CheckShards(config));
  ARROW_RETURN_NOT_OK(CheckTableCacheOptions(config));
  return CheckCatalog(config);
}

Status SetKey(SinkConfig& config, const KeySpec& spec, const Json& value) {
  ARROW_RETURN_NOT_OK(spec.set(config, spec.key, value));
  config.given_keys.insert(spec.key);
  return spec.check ? spec.check(config, spec.key) : Status::OK();
}

Result<SinkConfig> Parse(const Json& object) {
  if (!object.is_object()) {
    return InvalidArgument("expected a map of sink options (table, mode, ...), got {}", Describe(object));
  }
  SinkConfig config;
  for (const auto& [key, value] : object.items()) {
    const KeySpec* spec = FindSpec(key);
    if (!spec) return UnknownKey(key);
    if (value.is_null()) continue;  // `key:` with no value counts as absent
    ARROW_RETURN_NOT_OK(SetKey(config, *spec, value));
  }
  ARROW_RETURN_NOT_OK(Validate(config));
  return config;
}

// ---- command-line values ----

// Splits on commas outside parentheses and brackets, so "bucket(id, 4),day(ts)" is two terms. Empty
// entries are kept (and refused by DecodeStringList) so that "id,,region" does not pass silently.
std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  if (TrimSpace(text).empty()) return out;
  int depth = 0;
  std::string current;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      out.emplace_back(TrimSpace(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  out.emplace_back(TrimSpace(current));
  return out;
}

Result<Json> OverrideValue(const KeySpec& spec, std::string_view value) {
  switch (spec.type) {
    case KeyType::kString:
    case KeyType::kBool:
    case KeyType::kInt32: return Json(std::string(value));
    case KeyType::kStringList: return Json(SplitList(value));
    case KeyType::kErrorHandling: {
      // Either the location itself or the map spelling "output=<location>".
      const std::string prefix = std::string(kKeyErrorHandlingOutput) + "=";
      if (StartsWith(value, prefix)) value.remove_prefix(prefix.size());
      return Json{{kKeyErrorHandlingOutput, std::string(value)}};
    }
    case KeyType::kStringMap: {
      Json out = Json::object();
      for (const auto& entry : SplitList(value)) {
        const size_t eq = entry.find('=');
        if (eq == std::string::npos || eq == 0) {
          return InvalidArgument("{}: '{}' is not name=value (write a=1,b=2, or set one entry as {}.a=1)", spec.key,
                                 entry, spec.key);
        }
        out[std::string(TrimSpace(entry.substr(0, eq)))] = TrimSpace(entry.substr(eq + 1));
      }
      return out;
    }
  }
  return Json();
}

Status ApplyOverride(SinkConfig& config, std::string_view raw_key, std::string_view value) {
  std::string_view key = raw_key;
  while (StartsWith(key, "-")) key.remove_prefix(1);
  const size_t dot = key.find('.');
  std::string head(key.substr(0, dot));
  std::replace(head.begin(), head.end(), '-', '_');
  const KeySpec* spec = FindSpec(head);
  if (!spec) return UnknownKey(raw_key);
  if (dot == std::string_view::npos) {
    ARROW_ASSIGN_OR_RAISE(Json json, OverrideValue(*spec, value));
    return SetKey(config, *spec, json);
  }
  // One entry of a map (or error_handling.output): the rest of the key is the entry's name, as written.
  const std::string entry(key.substr(dot + 1));
  if (spec->type == KeyType::kErrorHandling) {
    Json json = Json::object();
    json[entry] = std::string(value);
    return SetKey(config, *spec, json);
  }
  if (!spec->map_field) {
    return InvalidArgument("{}: '{}' is not a map, so '{}' cannot name one of its entries", raw_key, spec->key, entry);
  }
  if (entry.empty()) return InvalidArgument("{}: the entry name after '{}.' is empty", raw_key, spec->key);
  Json json = ToJson(*spec->map_field(config));
  json[entry] = std::string(value);
  return SetKey(config, *spec, json);
}

}  // namespace


std::string_view WriteModeName(WriteMode mode) {
  return mode == WriteMode::kMergeOnRead ? "merge-on-read" : "append";
}

std::string_view DeleteStrategyName(DeleteStrategy strategy) {
  return strategy == DeleteStrategy::kEquality ? "equality" : "position";
}

std::optional<catalog::CatalogConfig> SinkConfig::catalog() const {
  if (!catalog_name && catalog_properties.empty() && !is_given(kKeyCatalogProperties)) return std::nullopt;
  catalog::CatalogConfig config;
  if (catalog_name) config.catalog_name = *catalog_name;
  config.catalog_properties = catalog_properties;
  return config;
}

bool SinkConfig::operator==(const SinkConfig& o) const {
  return std::tie(table, catalog_name, catalog_properties, mode, triggering_frequency_seconds, keep, drop, only,
                  partition_fields, sort_fields, table_properties, write_properties, equality_columns,
                  sequence_number_column, change_type_column, change_type_map, upsert, delete_strategy, num_shards,
                  shards_per_partition, sorter_memory_mb, sink_id, snapshot_properties, error_handling) ==
         std::tie(o.table, o.catalog_name, o.catalog_properties, o.mode, o.triggering_frequency_seconds, o.keep, o.drop,
                  o.only, o.partition_fields, o.sort_fields, o.table_properties, o.write_properties,
                  o.equality_columns, o.sequence_number_column, o.change_type_column, o.change_type_map, o.upsert,
                  o.delete_strategy, o.num_shards, o.shards_per_partition, o.sorter_memory_mb, o.sink_id,
                  o.snapshot_properties, o.error_handling);
}

Result<SinkConfig> ParseSinkConfig(const nlohmann::json& object, std::string_view source) {
  auto config = Parse(object);
  if (!config.ok()) return WithSource(config.status(), source);
  return config;
}

Result<SinkConfig> ParseSinkConfigText(std::string_view text, std::string_view source) {
  ARROW_ASSIGN_OR_RAISE(Json document, ParseYamlOrJson(text, source));
  if (document.is_null()) {
    return WithSource(InvalidArgument("the document is empty: expected sink options (table, mode, ...) or a job "
                                      "with a sink: block"),
                      source);
  }
  if (document.is_object() && document.contains("sink")) {
    const std::string sink_source = source.empty() ? std::string("sink") : fmt::format("{}: sink", source);
    const Json& sink = document["sink"];
    if (!sink.is_object()) {
      return WithSource(InvalidArgument("sink must be a map of sink options (table, mode, ...), got {}",
                                        Describe(sink)),
                        source);
    }
    return ParseSinkConfig(sink, sink_source);
  }
  return ParseSinkConfig(document, source);
}

Result<SinkConfig> LoadSinkConfigFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("sink configuration file {} does not exist", path);
  if (std::filesystem::is_directory(path, ec)) return IOError("sink configuration file {} is a directory", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return IOError("cannot open sink configuration file {}", path);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return IOError("reading sink configuration file {}", path);
  return ParseSinkConfigText(text.str(), path);
}

Status ApplySinkOverride(SinkConfig& config, std::string_view key, std::string_view value, std::string_view source) {
  // On a copy, so a refused override leaves the config as it was.
  SinkConfig updated = config;
  ARROW_RETURN_NOT_OK(WithSource(ApplyOverride(updated, key, value), source));
  config = std::move(updated);
  return Status::OK();
}

Status ApplySinkOverrides(SinkConfig& config, const std::vector<std::pair<std::string, std::string>>& overrides,
                          std::string_view source) {
  SinkConfig updated = config;
  for (const auto& [key, value] : overrides) ARROW_RETURN_NOT_OK(ApplySinkOverride(updated, key, value, source));
  ARROW_RETURN_NOT_OK(ValidateSinkConfig(updated, source));
  config = std::move(updated);
  return Status::OK();
}

Status ValidateSinkConfig(const SinkConfig& config, std::string_view source) {
  return WithSource(Validate(config), source);
}

nlohmann::json SinkConfigToJson(const SinkConfig& config, bool include_defaults) {
  Json out = Json::object();
  for (const auto& spec : Specs()) {
    if (!spec.emit) continue;
    const bool wanted = include_defaults ? AppliesTo(spec.modes, config.mode) : IsSet(config, spec);
    if (wanted) spec.emit(config, spec.key, out);
  }
  return out;
}

const std::vector<SinkKeyInfo>& SinkKeyInfos() {
  static const std::vector<SinkKeyInfo> infos = [] {
    std::vector<SinkKeyInfo> out;
    for (const auto& spec : Specs()) {
      static constexpr std::string_view kTypes[] = {"str", "bool", "int32", "list[str]", "map[str,str]",
                                                    "{output: str}"};
      static constexpr std::string_view kModes[] = {"both", "append", "merge-on-read"};
      out.push_back({spec.key, kTypes[static_cast<int>(spec.type)], spec.default_value,
                     kModes[static_cast<int>(spec.modes)], spec.used, spec.help});
    }
    std::sort(out.begin(), out.end(), [](const SinkKeyInfo& a, const SinkKeyInfo& b) { return a.key < b.key; });
    return out;
  }();
  return infos;
}

std::vector<std::string> KnownSinkKeys() {
  std::vector<std::string> keys;
  for (const auto& info : SinkKeyInfos()) {
    if (info.used) keys.emplace_back(info.key);
  }
  return keys;
}

}  // namespace lakesync::sink
