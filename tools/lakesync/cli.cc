#include "cli.h"

#include <unistd.h>

#include <cstdio>

#include "lakesync/catalog/catalog_config.h"

namespace lakesync::cli {

void AddCatalogOption(CLI::App& cmd, GlobalOptions& global) {
  cmd.add_option("--catalog-config", global.catalog_config,
                 "YAML file with catalog_name and catalog_properties (default: the embedded SQLite catalog)")
      ->check(CLI::ExistingFile);
}

Result<std::shared_ptr<catalog::Catalog>> OpenCatalog(const GlobalOptions& global) {
  catalog::CatalogConfig config;
  if (global.catalog_config.empty()) {
    ARROW_ASSIGN_OR_RAISE(config, catalog::DefaultCatalogConfig());
  } else {
    ARROW_ASSIGN_OR_RAISE(config, catalog::LoadCatalogConfigFile(global.catalog_config));
  }
  return catalog::LoadCatalog(config);
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

int ExitCodeFor(const Status& status) {
  switch (KindOf(status)) {
    case ErrorKind::kInvalidArgument: return kExitUsage;
    case ErrorKind::kNotFound: return kExitNotFound;
    case ErrorKind::kCorrupt: return kExitCorrupt;
    default: return kExitFailure;
  }
}

}  // namespace lakesync::cli
