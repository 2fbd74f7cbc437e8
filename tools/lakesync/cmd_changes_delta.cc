// lakesync changes --source delta (work in progress: see the open issue for the Delta source).
#include "changes_args.h"

namespace lakesync::cli {

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenDeltaChanges(const ChangesArgs&, const GlobalOptions&) {
  return Status::NotImplemented("lakesync changes --source delta is not available yet");
}

}  // namespace lakesync::cli
