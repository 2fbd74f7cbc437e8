#include "lakesync/table/table.h"

#include "lakesync/iceberg/commit/table_update.h"
#include "lakesync/table/pending_files.h"

namespace lakesync::table {

Result<std::shared_ptr<Table>> Table::Load(std::shared_ptr<catalog::Catalog> catalog,
                                           const catalog::TableIdentifier& identifier) {
  ARROW_ASSIGN_OR_RAISE(auto loaded, catalog->LoadTable(identifier));
  return std::make_shared<Table>(std::move(catalog), std::move(loaded));
}

Status Table::Refresh() {
  ARROW_ASSIGN_OR_RAISE(loaded_, catalog_->LoadTable(loaded_.identifier));
  return Status::OK();
}

Result<std::shared_ptr<arrow::io::OutputStream>> Table::OpenOutput(const std::string& location) const {
  if (pending_) ARROW_RETURN_NOT_OK(pending_->Record(location));
  return io()->OpenOutput(location, file_syncs_);
}

Status Table::WriteFile(const std::string& location, std::string_view data) const {
  if (pending_) ARROW_RETURN_NOT_OK(pending_->Record(location));
  return io()->WriteAll(location, data);
}

std::function<Result<std::shared_ptr<arrow::io::OutputStream>>(const std::string&)> Table::Outputs() const {
  auto io = this->io();
  auto pending = pending_;
  auto syncs = file_syncs_;
  return [io, pending, syncs](const std::string& location) -> Result<std::shared_ptr<arrow::io::OutputStream>> {
    if (pending) ARROW_RETURN_NOT_OK(pending->Record(location));
    return io->OpenOutput(location, syncs);
  };
}

std::string Table::NewFileStem() const { return pending_ ? pending_->NewStem() : iceberg::NewUuid(); }

}  // namespace lakesync::table
