// What a job's target already holds, and whether a job's first run may write into it. The trap this
// guards: a job that cannot find its own progress (a new sink_id, a copied or renamed job written by
// an older lakesync that named sinks after the file, a second job importing into the same table)
// would import the source again and silently duplicate every row.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/catalog/catalog.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/sink/cdc_writer.h"

namespace lakesync::engine {

struct TargetTable {
  catalog::TableIdentifier id;
  int64_t records = 0;                  // physical rows of the current snapshot
  std::optional<int64_t> live_records;  // with deletes applied, when the summary tells (sink/progress.h)
  std::map<std::string, sink::SourcePosition> sinks;  // every sink's committed position
};

// The existing tables a sink writes: the table itself, or for a template (db.orders_{region}) the
// tables of its namespace whose names fit the template. Missing tables and namespaces are absent.
Result<std::vector<TargetTable>> InspectTargets(catalog::Catalog& catalog, const std::string& sink_table);

// What a job's first run (no position under its sink_id) does with what the target holds.
enum class FirstRun {
  kProceed,     // write as planned
  kSkipImport,  // do not import; apply the changes after the start bound
  kOverwrite,   // remove the target's rows, then import
};

// The rules (docs/jobs.md, "Job identity"):
//  * progress of other sinks and no sink_id in the job: refused unless initial_snapshot says skip or
//    overwrite — the progress may be this job's under an older default sink id, and starting again
//    would apply its changes twice;
//  * an import (a snapshot source, or initial_snapshot) into a target that holds rows or other sinks'
//    progress: refused unless initial_snapshot.if_target_not_empty is skip or overwrite.
// Errors: InvalidArgument saying what the target holds and which key decides.
Result<FirstRun> DecideFirstRun(const JobConfig& job, const std::string& sink_id, bool import,
                                const std::vector<TargetTable>& targets);

// Removes every data and delete file of the table in one commit (operation "delete"), keeping its
// schema, spec, properties and history. Used by if_target_not_empty: overwrite before the import;
// a crash between the two leaves an empty table that the next run imports into.
Status ClearTable(std::shared_ptr<catalog::Catalog> catalog, const catalog::TableIdentifier& id);

}  // namespace lakesync::engine
