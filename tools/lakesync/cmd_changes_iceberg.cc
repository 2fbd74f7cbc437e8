// lakesync changes --source iceberg (work in progress: see the open issue for the Iceberg source).
#include "changes_args.h"

namespace lakesync::cli {

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenIcebergChanges(const ChangesArgs&, const GlobalOptions&) {
  return Status::NotImplemented("lakesync changes --source iceberg is not available yet");
}

}  // namespace lakesync::cli
