#include "lakesync/table/table.h"

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

}  // namespace lakesync::table
