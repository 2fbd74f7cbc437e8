// A table handle: the catalog it lives in, its identifier, and the metadata last loaded or committed.
// Operations (append, scan, row deltas) take a Table and refresh it after they commit.
#pragma once

#include <memory>
#include <string>

#include "lakesync/catalog/catalog.h"
#include "lakesync/io/file_io.h"

namespace lakesync::table {

class Table {
 public:
  // Errors: kNotFound when the table does not exist.
  static Result<std::shared_ptr<Table>> Load(std::shared_ptr<catalog::Catalog> catalog,
                                             const catalog::TableIdentifier& identifier);
  Table(std::shared_ptr<catalog::Catalog> catalog, catalog::LoadedTable loaded)
      : catalog_(std::move(catalog)), loaded_(std::move(loaded)) {}

  const catalog::TableIdentifier& identifier() const { return loaded_.identifier; }
  std::string name() const { return loaded_.identifier.ToString(); }
  const iceberg::TableMetadataPtr& metadata() const { return loaded_.metadata; }
  const std::string& metadata_location() const { return loaded_.metadata_location; }
  const std::shared_ptr<catalog::Catalog>& catalog() const { return catalog_; }
  // The table's own FileIO when the catalog vended one with it (REST storage credentials), else the
  // catalog's.
  std::shared_ptr<io::FileIO> io() const { return loaded_.io ? loaded_.io : catalog_->io(); }

  // Reloads the current metadata from the catalog.
  Status Refresh();
  // Takes the result of a commit as the current state.
  void Update(catalog::LoadedTable loaded) {
    // A commit answer carries no storage credentials: keep the ones the table was loaded with.
    if (!loaded.io) loaded.io = loaded_.io;
    loaded_ = std::move(loaded);
  }

 private:
  std::shared_ptr<catalog::Catalog> catalog_;
  catalog::LoadedTable loaded_;
};

}  // namespace lakesync::table
