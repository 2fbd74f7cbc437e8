// The Delta Lake sources of a job (docs/jobs.md): delta_lake_cdc reads the Change Data Feed after
// the committed version; delta_lake imports a snapshot. Ordinals are Delta versions.
#pragma once

#include <memory>

#include "lakesync/engine/change_source.h"
#include "lakesync/engine/job_config.h"

namespace lakesync::engine {

// Errors: InvalidArgument naming the key for a bad source block; NotFound when there is no Delta
// table at source.table.
Result<std::unique_ptr<ChangeSource>> OpenDeltaSource(const JobConfig& job);

}  // namespace lakesync::engine
