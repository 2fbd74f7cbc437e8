// The Delta Sharing sources of a job (docs/jobs.md): delta_sharing_cdc reads a shared table's change
// data feed after the committed version; delta_sharing imports a snapshot. The keys are
// delta_lake_cdc's / delta_lake's, with `table` naming SHARE.SCHEMA.TABLE and `profile` the
// recipient's profile file. Ordinals are the shared table's Delta versions.
#pragma once

#include <memory>

#include "lakesync/engine/change_source.h"
#include "lakesync/engine/job_config.h"

namespace lakesync::engine {

// Errors: InvalidArgument naming the key for a bad source block; NotFound for a missing profile;
// the server's answer (Unauthenticated, Forbidden, NotFound) when the table cannot be reached.
Result<std::unique_ptr<ChangeSource>> OpenSharingSource(const JobConfig& job);

}  // namespace lakesync::engine
