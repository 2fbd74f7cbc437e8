#include "lakesync/engine/target_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

#include "lakesync/sink/progress.h"
#include "lakesync/sink/table_template.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::engine {
namespace {

Result<std::optional<TargetTable>> Inspect(catalog::Catalog& catalog, const catalog::TableIdentifier& id) {
  auto loaded = catalog.LoadTable(id);
  if (!loaded.ok()) {
    if (KindOf(loaded.status()) == ErrorKind::kNotFound) return std::optional<TargetTable>();
    return loaded.status();
  }
  TargetTable t;
  t.id = id;
  ARROW_ASSIGN_OR_RAISE(t.sinks, sink::CommittedPositions(*loaded->metadata));
  if (auto current = loaded->metadata->CurrentSnapshot()) {
    // Counted from the manifests when the summary lacks its totals, so that an import never mistakes
    // a full table for an empty one.
    auto io = loaded->io ? loaded->io : catalog.io();
    LS_ASSIGN_OR_RAISE_CTX(auto totals, sink::CountSnapshotTotals(*io, *loaded->metadata, *current),
                           "counting the rows of {} (snapshot {})", id.ToString(), current->snapshot_id);
    t.records = totals.records;
    t.live_records = totals.live();
  }
  return std::optional<TargetTable>(std::move(t));
}

// "db.orders_{region}" → ^orders_.+$ for the table part; placeholders match any non-empty text.
std::regex TemplatePattern(std::string_view table_part) {
  std::string pattern = "^";
  bool in_placeholder = false;
  for (char c : table_part) {
    if (c == '{') {
      in_placeholder = true;
      pattern += ".+";
    } else if (c == '}') {
      in_placeholder = false;
    } else if (!in_placeholder) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) pattern.push_back('\\');
      pattern.push_back(c);
    }
  }
  return std::regex(pattern + "$");
}

std::string Holds(const TargetTable& t) {
  std::vector<std::string> parts;
  if (t.live_records) {
    parts.push_back(fmt::format("{} rows", *t.live_records));
  } else if (t.records > 0) {
    parts.push_back(fmt::format("{} rows (before equality deletes)", t.records));
  }
  for (const auto& [id, position] : t.sinks) {
    parts.push_back(fmt::format("the progress of sink '{}' (source position {})", id, position.text));
  }
  return fmt::format("{} holds {}", t.id.ToString(), fmt::join(parts, " and "));
}

}  // namespace

Result<std::vector<TargetTable>> InspectTargets(catalog::Catalog& catalog, const std::string& sink_table) {
  std::vector<TargetTable> out;
  if (!sink::IsTemplate(sink_table)) {
    ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(sink_table));
    ARROW_ASSIGN_OR_RAISE(auto t, Inspect(catalog, id));
    if (t) out.push_back(std::move(*t));
    return out;
  }
  const auto dot = sink_table.rfind('.');
  if (dot == std::string::npos || sink::IsTemplate(sink_table.substr(0, dot))) {
    return Unsupported("sink.table '{}': jobs support templates in the table name only, not in the namespace",
                       sink_table);
  }
  ARROW_ASSIGN_OR_RAISE(auto ns, catalog::ParseNamespace(sink_table.substr(0, dot)));
  ARROW_ASSIGN_OR_RAISE(bool exists, catalog.NamespaceExists(ns));
  if (!exists) return out;
  const std::regex pattern = TemplatePattern(std::string_view(sink_table).substr(dot + 1));
  ARROW_ASSIGN_OR_RAISE(auto ids, catalog.ListTables(ns));
  for (const auto& id : ids) {
    if (!std::regex_match(id.name, pattern)) continue;
    ARROW_ASSIGN_OR_RAISE(auto t, Inspect(catalog, id));
    if (t) out.push_back(std::move(*t));
  }
  return out;
}

Result<FirstRun> DecideFirstRun(const JobConfig& job, const std::string& sink_id, bool import,
                                const std::vector<TargetTable>& targets) {
  std::vector<std::string> held;
  std::vector<std::string> others;
  bool rows = false;
  for (const auto& t : targets) {
    bool foreign = false;
    for (const auto& [id, position] : t.sinks) {
      if (id == sink_id) continue;
      foreign = true;
      if (std::find(others.begin(), others.end(), id) == others.end()) others.push_back(id);
    }
    const bool has_rows = t.live_records ? *t.live_records > 0 : t.records > 0;
    rows = rows || has_rows;
    if (foreign || has_rows) held.push_back(Holds(t));
  }
  const bool policy_opens = job.if_target_not_empty_given && job.if_target_not_empty != IfTargetNotEmpty::kFail;
  if (!others.empty() && !job.sink_id_given && !policy_opens) {
    const std::string found = others.size() == 1 ? others.front() : "<one of them>";
    return InvalidArgument(
        "{}: {}, but nothing of this job's sink '{}' (derived from the source and the target table). If that "
        "progress is this job's, recorded by an older lakesync that named sinks after the job file, set "
        "`sink_id: {}` in the job's sink to continue from it; to write next to it as a separate source, give the "
        "job its own sink_id; to import again set source.initial_snapshot: {{if_target_not_empty: overwrite}}. "
        "Nothing was written.",
        job.location, fmt::join(held, "; "), sink_id, found);
  }
  if (!import || (!rows && others.empty())) return FirstRun::kProceed;
  switch (job.if_target_not_empty) {
    case IfTargetNotEmpty::kSkip: return FirstRun::kSkipImport;
    case IfTargetNotEmpty::kOverwrite: return FirstRun::kOverwrite;
    case IfTargetNotEmpty::kFail: break;
  }
  return InvalidArgument(
      "{}: {}; importing the source's snapshot into it would duplicate rows. Set "
      "source.initial_snapshot: {{if_target_not_empty: skip}} if the target already holds the source as of the "
      "start bound (only the changes after it are applied), or {{if_target_not_empty: overwrite}} to replace the "
      "target's rows. Nothing was written.",
      job.location, fmt::join(held, "; "));
}

Status ClearTable(std::shared_ptr<catalog::Catalog> catalog, const catalog::TableIdentifier& id) {
  ARROW_ASSIGN_OR_RAISE(auto table, table::Table::Load(catalog, id));
  auto current = table->metadata()->CurrentSnapshot();
  if (!current) return Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto live, table::ReadLiveEntries(*table->io(), *table->metadata(), *current));
  if (live.data.empty() && live.deletes.empty()) return Status::OK();
  table::SnapshotUpdate update(table);
  for (const auto& e : live.data) update.RemoveDataFile(e.data_file->file_path);
  // A deletion vector goes with its data file; position and equality delete files are named.
  for (const auto& e : live.deletes) {
    if (!e.data_file->IsDeletionVector()) update.RemoveDeleteFile(e.data_file->file_path);
  }
  update.SetOperation("delete");
  LS_RETURN_NOT_OK_CTX(update.Commit().status(), "removing the rows of {} (if_target_not_empty: overwrite)",
                       id.ToString());
  return Status::OK();
}

}  // namespace lakesync::engine
