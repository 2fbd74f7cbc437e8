// lakesync changes --source sharing: the change data feed of a table shared over Delta Sharing, read
// from its server and its signed file URLs; the same flags, rows and columns as --source delta.
#include "changes_args.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/sharing/shared_table.h"

namespace lakesync::cli {

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenSharingChanges(const ChangesArgs& args,
                                                                     const GlobalOptions& global) {
  if (!global.catalog_config.empty()) {
    return InvalidArgument("--catalog-config does not apply to --source sharing: the profile names the server");
  }
  ARROW_ASSIGN_OR_RAISE(auto options, DeltaFeedOptions(args, "sharing"));
  ARROW_ASSIGN_OR_RAISE(auto table, sharing::SharedTable::Open(args.table));
  return table->ReadChanges(options);
}

}  // namespace lakesync::cli
