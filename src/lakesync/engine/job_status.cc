#include "lakesync/engine/job_status.h"

#include "lakesync/engine/run_state.h"

namespace lakesync::engine {

Result<nlohmann::json> JobStatusJson(JobRunner& runner) {
  ARROW_ASSIGN_OR_RAISE(auto json, runner.StatusJson());
  json["last_run"] = nullptr;
  json["last_error"] = nullptr;
  json["running"] = nullptr;
  auto state =
      RunState::Open(RunState::DefaultDirectory(), RunState::KeyFor(runner.sink_id(), runner.job().sink.table));
  if (state.ok()) {
    ARROW_ASSIGN_OR_RAISE(auto traces, (*state)->Load());
    if (traces.contains("last_run")) json["last_run"] = traces["last_run"];
    if (traces.contains("last_error")) json["last_error"] = traces["last_error"];
    ARROW_ASSIGN_OR_RAISE(bool running, (*state)->InProgress());
    json["running"] = running;
  }
  return json;
}

}  // namespace lakesync::engine
