// A table handle: the catalog it lives in, its identifier, and the metadata last loaded or committed.
// Operations (append, scan, row deltas) take a Table and refresh it after they commit.
#pragma once

#include <arrow/io/type_fwd.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "lakesync/catalog/catalog.h"
#include "lakesync/io/file_io.h"
#include "lakesync/io/file_syncs.h"

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

  // Every file a write to this table creates goes through these two, so that with a pending-files
  // record set (pending_files.h) each location is recorded before the file exists.
  Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutput(const std::string& location) const;
  Status WriteFile(const std::string& location, std::string_view data) const;
  // OpenOutput as a factory for the writers in iceberg/write.
  std::function<Result<std::shared_ptr<arrow::io::OutputStream>>(const std::string&)> Outputs() const;
  // Local files streamed through OpenOutput/Outputs are synced on the IO executor once closed, not in
  // Close (io/file_syncs.h); this waits for those syncs and reports the first that failed. Whatever
  // names the files (SnapshotUpdate's commit, a staged write handing them on) calls it first.
  Status AwaitFileSyncs() const { return file_syncs_->Wait(); }
  // A distinct stem for the name of a new file (or for a writer's files, numbered after it): with a
  // pending-files record, one its token names, so that files directly in the metadata directory or the
  // data location need no record write first (PendingFiles::NewStem); without, a fresh UUID.
  std::string NewFileStem() const;

  // The record of the write attempt in progress (nullptr: none; files are then not recorded).
  void set_pending_files(std::shared_ptr<class PendingFiles> pending) { pending_ = std::move(pending); }
  const std::shared_ptr<class PendingFiles>& pending_files() const { return pending_; }

 private:
  std::shared_ptr<catalog::Catalog> catalog_;
  catalog::LoadedTable loaded_;
  std::shared_ptr<class PendingFiles> pending_;
  // Shared with the streams opened through this table (and with copies of it).
  std::shared_ptr<io::FileSyncs> file_syncs_ = std::make_shared<io::FileSyncs>();
};

}  // namespace lakesync::table
