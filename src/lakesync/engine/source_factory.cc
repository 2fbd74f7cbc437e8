#include "lakesync/engine/source_factory.h"

#include "lakesync/engine/delta_source.h"
#include "lakesync/engine/iceberg_source.h"
#include "lakesync/engine/sharing_source.h"

namespace lakesync::engine {

Result<std::unique_ptr<ChangeSource>> OpenSource(const JobConfig& job, std::shared_ptr<catalog::Catalog> catalog) {
  switch (job.source_type) {
    case SourceType::kDeltaLakeCdc:
    case SourceType::kDeltaLake:
      return OpenDeltaSource(job);
    case SourceType::kIcebergCdc:
    case SourceType::kIceberg:
      return OpenIcebergSource(job, std::move(catalog));
    case SourceType::kDeltaSharingCdc:
    case SourceType::kDeltaSharing:
      return OpenSharingSource(job);
  }
  return InvalidArgument("{}: unknown source type", job.location);
}

}  // namespace lakesync::engine
