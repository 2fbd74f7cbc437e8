#include "lakesync/catalog/named_catalogs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lakesync/common/config_keys.h"
#include "lakesync/common/text.h"

extern char** environ;

namespace lakesync::catalog {
namespace {

constexpr char kEnvConfig[] = "LAKESYNC_CONFIG";
constexpr char kEnvPrefix[] = "lakesync_catalog__";
constexpr char kKeyDefault[] = "default-catalog";
constexpr char kKeyCatalog[] = "catalog";

std::optional<std::string> Lookup(const EnvironmentList& env, const std::string& name) {
  for (const auto& [k, v] : env) {
    if (k == name && !v.empty()) return v;
  }
  return std::nullopt;
}

Status ParseFile(const std::string& path, NamedCatalogs& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IOError("cannot read the catalog configuration {}", path);
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    return InvalidArgument("{}: malformed YAML: {}", path, e.what());
  }
  if (root.IsNull()) return Status::OK();
  if (!root.IsMap()) return InvalidArgument("{}: expected a map with the keys {} and {}", path, kKeyCatalog, kKeyDefault);
  for (const auto& entry : root) {
    const std::string key = AsciiLower(entry.first.as<std::string>());
    if (key == kKeyDefault) {
      if (!entry.second.IsScalar()) return InvalidArgument("{}: {} must be a catalog name", path, kKeyDefault);
      out.default_catalog = entry.second.Scalar();
    } else if (key == kKeyCatalog) {
      if (entry.second.IsNull()) continue;
      if (!entry.second.IsMap()) return InvalidArgument("{}: {} must map catalog names to their properties", path, key);
      for (const auto& named : entry.second) {
        const std::string name = AsciiLower(named.first.as<std::string>());
        if (!named.second.IsMap()) {
          return InvalidArgument("{}: catalog.{} must be a map of properties (type, uri, warehouse, ...)", path, name);
        }
        CatalogConfig config;
        config.catalog_name = name;
        for (const auto& prop : named.second) {
          const std::string prop_name = prop.first.as<std::string>();
          if (!prop.second.IsScalar()) {
            return InvalidArgument("{}: catalog.{}.{} must be a single value", path, name, prop_name);
          }
          config.catalog_properties[prop_name] = prop.second.Scalar();
        }
        out.catalogs[name] = std::move(config);
      }
    } else {
      const std::vector<std::string> known = {kKeyCatalog, kKeyDefault};
      if (auto close = ClosestKey(key, known)) {
        return InvalidArgument("{}: unknown key '{}'; did you mean '{}'?", path, key, *close);
      }
      return InvalidArgument("{}: unknown key '{}' (allowed: {}, {})", path, key, kKeyCatalog, kKeyDefault);
    }
  }
  return Status::OK();
}

}  // namespace

EnvironmentList ProcessEnvironment() {
  EnvironmentList out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    out.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return out;
}

Result<NamedCatalogs> LoadNamedCatalogs(const EnvironmentList& env) {
  NamedCatalogs out;
  if (auto path = Lookup(env, kEnvConfig)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec)) {
      return NotFound("{}={}: the catalog configuration file does not exist", kEnvConfig, *path);
    }
    out.source = *path;
  } else if (auto home = Lookup(env, "HOME")) {
    const std::string path = (std::filesystem::path(*home) / ".lakesync.yaml").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) out.source = path;
  }
  if (!out.source.empty()) ARROW_RETURN_NOT_OK(ParseFile(out.source, out));
  // pyiceberg's convention: PREFIX + <name> + "__" + <prop>, with "__" → "." and "_" → "-" in prop.
  for (const auto& [name, value] : env) {
    const std::string lower = AsciiLower(name);
    if (lower.rfind(kEnvPrefix, 0) != 0) continue;
    const std::string rest = lower.substr(std::string_view(kEnvPrefix).size());
    const auto sep = rest.find("__");
    if (sep == std::string::npos || sep == 0 || sep + 2 >= rest.size()) {
      return InvalidArgument("environment variable {}: expected LAKESYNC_CATALOG__<NAME>__<PROPERTY>", name);
    }
    const std::string catalog = rest.substr(0, sep);
    std::string prop;
    const std::string raw = rest.substr(sep + 2);
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '_' && i + 1 < raw.size() && raw[i + 1] == '_') {
        prop.push_back('.');
        ++i;
      } else {
        prop.push_back(raw[i] == '_' ? '-' : raw[i]);
      }
    }
    auto& config = out.catalogs[catalog];
    config.catalog_name = catalog;
    config.catalog_properties[prop] = value;
  }
  return out;
}

Result<CatalogConfig> ResolveNamedCatalog(const NamedCatalogs& catalogs, const std::string& name) {
  const std::string where = catalogs.source.empty() ? std::string("LAKESYNC_CATALOG__* variables") : catalogs.source;
  auto it = catalogs.catalogs.find(AsciiLower(name));
  if (it == catalogs.catalogs.end()) {
    std::vector<std::string> names;
    for (const auto& [n, c] : catalogs.catalogs) names.push_back(n);
    if (names.empty()) {
      return NotFound("no catalog named '{}': there is no ~/.lakesync.yaml (or LAKESYNC_CONFIG file) and no "
                      "LAKESYNC_CATALOG__{}__* variable defining one",
                      name, name);
    }
    if (auto close = ClosestKey(AsciiLower(name), names)) {
      return NotFound("no catalog named '{}' in {}; did you mean '{}'?", name, where, *close);
    }
    return NotFound("no catalog named '{}' in {} (known: {})", name, where, fmt::join(names, ", "));
  }
  LS_RETURN_NOT_OK_CTX(ValidateCatalogConfig(it->second), "{}", where);
  return it->second;
}

}  // namespace lakesync::catalog
