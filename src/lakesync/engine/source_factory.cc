#include "lakesync/engine/source_factory.h"

namespace lakesync::engine {

Result<std::unique_ptr<ChangeSource>> OpenSource(const JobConfig& job, std::shared_ptr<catalog::Catalog> /*catalog*/) {
  switch (job.source_type) {
    case SourceType::kDeltaLakeCdc:
    case SourceType::kDeltaLake:
    case SourceType::kIcebergCdc:
    case SourceType::kIceberg:
      break;
  }
  return Unsupported("{}: source type {} is not available in this build yet", job.location,
                     SourceTypeName(job.source_type));
}

}  // namespace lakesync::engine
