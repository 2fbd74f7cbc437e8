// What `lakesync status` prints for a job, and what the dashboard's job page shows for a job file: the
// committed position, the source's latest commit and the lag (JobRunner::StatusJson), plus this
// machine's run history (run_state.h): the last run, the last error, and whether a run is in progress.
// One function, so the command and the dashboard cannot disagree.
#pragma once

#include <nlohmann/json.hpp>

#include "lakesync/engine/job_runner.h"

namespace lakesync::engine {

// StatusJson() with "last_run", "last_error" and "running" added (null where this machine keeps no run
// history for the job, e.g. no state folder).
Result<nlohmann::json> JobStatusJson(JobRunner& runner);

}  // namespace lakesync::engine
