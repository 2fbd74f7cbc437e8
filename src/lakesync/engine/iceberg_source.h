// The Iceberg sources of a job (docs/jobs.md, docs/changelog.md): iceberg_cdc reads the changelog
// after the committed snapshot; iceberg imports a snapshot. Ordinals are snapshot sequence numbers
// along the main branch.
#pragma once

#include <memory>

#include "lakesync/catalog/catalog.h"
#include "lakesync/engine/change_source.h"
#include "lakesync/engine/job_config.h"

namespace lakesync::engine {

// `catalog`: used unless the source block names its own catalog.
// Errors: InvalidArgument naming the key for a bad source block; NotFound for a missing table or
// snapshot.
Result<std::unique_ptr<ChangeSource>> OpenIcebergSource(const JobConfig& job, std::shared_ptr<catalog::Catalog> catalog);

}  // namespace lakesync::engine
