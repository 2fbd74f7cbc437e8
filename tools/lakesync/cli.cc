#include "cli.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/catalog/named_catalogs.h"
#include "lakesync/common/logging.h"
#include "lakesync/table/table.h"

namespace lakesync::cli {

void AddCatalogOption(CLI::App& cmd, GlobalOptions& global) {
  auto* file = cmd.add_option("--catalog-config", global.catalog_config,
                              "YAML file with catalog_name and catalog_properties (default: --catalog, else the "
                              "embedded SQLite catalog)")
                   ->check(CLI::ExistingFile);
  auto* named = cmd.add_option("--catalog", global.catalog,
                               "a catalog named in ~/.lakesync.yaml (or $LAKESYNC_CONFIG), like pyiceberg's; "
                               "LAKESYNC_CATALOG__<NAME>__<PROP> variables override its properties");
  file->excludes(named);
}

Result<catalog::CatalogConfig> ResolveCatalogConfig(const GlobalOptions& global, const std::string& base_dir) {
  if (!global.catalog_config.empty()) return catalog::LoadCatalogConfigFile(global.catalog_config);
  ARROW_ASSIGN_OR_RAISE(auto named, catalog::LoadNamedCatalogs());
  if (!global.catalog.empty()) return catalog::ResolveNamedCatalog(named, global.catalog);
  if (named.default_catalog) return catalog::ResolveNamedCatalog(named, *named.default_catalog);
  return catalog::DefaultCatalogConfig(base_dir);
}

Result<std::shared_ptr<catalog::Catalog>> OpenCatalog(const GlobalOptions& global, const std::string& base_dir) {
  ARROW_ASSIGN_OR_RAISE(auto config, ResolveCatalogConfig(global, base_dir));
  return catalog::LoadCatalog(config);
}

Result<std::shared_ptr<table::Table>> LoadNamedTable(const GlobalOptions& global, const std::string& name) {
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(name));
  ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(global));
  return table::Table::Load(catalog, id);
}

Result<std::map<std::string, std::string>> ParseKeyValues(const std::vector<std::string>& items,
                                                           std::string_view flag) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("{} '{}': expected KEY=VALUE", flag, item);
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

void Print(std::string_view text) {
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
}

void ReportError(const Cli& cli, const std::string& raw_message, int exit_code, std::string_view kind) {
  const std::string message = EscapeInvalidUtf8(raw_message);
  if (cli.global.log_format == "json") {
    nlohmann::json fields = {{"event", "fatal"}, {"exit_code", exit_code}};
    if (!kind.empty()) fields["error_kind"] = std::string(kind);
    LogEvent(spdlog::level::err, message, fields);
    spdlog::default_logger()->flush();
    return;
  }
  std::fflush(stdout);
  std::cerr << "lakesync: error: " << message << std::endl;
}

Status MissingNamespace(const catalog::Namespace& ns) {
  const std::string name = catalog::NamespaceToString(ns);
  return NotFound("namespace '{}' does not exist; create it with: lakesync namespace create {}", name, name);
}

int ExitCodeFor(const Status& status) {
  switch (KindOf(status)) {
    case ErrorKind::kInvalidArgument: return kExitUsage;
    case ErrorKind::kNotFound: return kExitNotFound;
    case ErrorKind::kCorrupt: return kExitCorrupt;
    default: return kExitFailure;
  }
}

}  // namespace lakesync::cli
