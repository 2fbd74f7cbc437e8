// Opens the source a job names, by its type. Each source type validates its own keys here, so
// messages name the key and the job file.
#pragma once

#include <memory>

#include "lakesync/catalog/catalog.h"
#include "lakesync/engine/change_source.h"
#include "lakesync/engine/job_config.h"

namespace lakesync::engine {

// Errors: InvalidArgument naming the key for a bad source block; the source's own errors when it
// cannot be opened (NotFound for a missing table, ...).
Result<std::unique_ptr<ChangeSource>> OpenSource(const JobConfig& job, std::shared_ptr<catalog::Catalog> catalog);

}  // namespace lakesync::engine
