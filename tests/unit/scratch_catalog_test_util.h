// A real SQLite catalog in a fresh temporary folder, for unit tests that need tables on disk (include
// as "scratch_catalog_test_util.h", next to "status_test_util.h").
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string_view>

#include "lakesync/catalog/sql/sql_catalog.h"
#include "lakesync/common/status.h"
#include "lakesync/io/file_io.h"

namespace lakesync {

struct ScratchCatalog {
  std::filesystem::path dir;  // the caller removes it (TearDown)
  std::shared_ptr<catalog::SqlCatalog> catalog;
};

// The catalog "t" with its database at <dir>/c.db and its warehouse at <dir>/wh, where dir is a new
// folder lakesync-<tag>-<random> under the system's temporary folder, holding the namespace "ns".
inline Result<ScratchCatalog> MakeScratchCatalog(std::string_view tag) {
  std::random_device rd;
  ScratchCatalog scratch;
  scratch.dir = std::filesystem::temp_directory_path() / fmt::format("lakesync-{}-{:08x}", tag, rd());
  std::filesystem::create_directories(scratch.dir);
  ARROW_ASSIGN_OR_RAISE(auto io, io::FileIO::Make());
  catalog::SqlCatalogOptions options{"t", (scratch.dir / "c.db").string(), "file://" + (scratch.dir / "wh").string(),
                                     io};
  ARROW_ASSIGN_OR_RAISE(scratch.catalog, catalog::SqlCatalog::Make(options));
  ARROW_RETURN_NOT_OK(scratch.catalog->CreateNamespace({"ns"}, {}));
  return scratch;
}

}  // namespace lakesync
