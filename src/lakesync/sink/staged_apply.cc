#include "lakesync/sink/staged_apply.h"

#include <fmt/format.h>

#include "lakesync/catalog/metadata_files.h"
#include "lakesync/common/failpoint.h"
#include "lakesync/common/logging.h"
#include "lakesync/formats/puffin/roaring64_portable.h"
#include "lakesync/iceberg/model/content_file_json.h"
#include "lakesync/iceberg/model/json_serde.h"
#include "lakesync/sink/cdc_writer.h"
#include "lakesync/table/snapshot_update.h"

namespace lakesync::sink {
namespace {

using Json = nlohmann::json;

std::string PositionKey(const std::string& sink_id) { return kSummarySourcePositionPrefix + sink_id; }

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

Result<std::string> Unhex(std::string_view hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2) return InvalidArgument("staged positions: odd-length hex");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("staged positions: not lower-case hex");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

Result<Json> FilesToJson(const std::vector<iceberg::DataFile>& files, const iceberg::TableMetadata& m) {
  Json out = Json::array();
  for (const auto& f : files) {
    ARROW_ASSIGN_OR_RAISE(auto j, iceberg::ContentFileToJson(f, m));
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::vector<iceberg::DataFile>> FilesFromJson(const Json& json, const iceberg::TableMetadata& m) {
  std::vector<iceberg::DataFile> out;
  if (json.is_null()) return out;
  if (!json.is_array()) return InvalidArgument("staged files: expected an array of content files");
  for (const auto& j : json) {
    ARROW_ASSIGN_OR_RAISE(auto f, iceberg::ContentFileFromJson(j, m));
    out.push_back(std::move(f));
  }
  return out;
}

Json StatsToJson(const plan::CollapseStats& s) {
  return {{"changes", s.changes},           {"inserts", s.inserts},
          {"update_befores", s.update_befores}, {"update_afters", s.update_afters},
          {"deletes", s.deletes},           {"keys", s.keys},
          {"rows_to_write", s.rows_to_write}, {"keys_to_delete", s.keys_to_delete},
          {"collapsed_away", s.collapsed_away}, {"dead_letters", s.dead_letters},
          {"spilled_bytes", s.spilled_bytes}};
}

plan::CollapseStats StatsFromJson(const Json& j) {
  plan::CollapseStats s;
  auto get = [&](const char* k) { return j.contains(k) ? j[k].get<int64_t>() : 0; };
  s.changes = get("changes");
  s.inserts = get("inserts");
  s.update_befores = get("update_befores");
  s.update_afters = get("update_afters");
  s.deletes = get("deletes");
  s.keys = get("keys");
  s.rows_to_write = get("rows_to_write");
  s.keys_to_delete = get("keys_to_delete");
  s.collapsed_away = get("collapsed_away");
  s.dead_letters = get("dead_letters");
  s.spilled_bytes = get("spilled_bytes");
  return s;
}

Json RemovedToJson(const std::vector<std::pair<std::string, std::string>>& removed) {
  Json out = Json::array();
  for (const auto& [path, referenced] : removed) out.push_back({{"file-path", path}, {"referenced-data-file", referenced}});
  return out;
}

std::vector<std::pair<std::string, std::string>> RemovedFromJson(const Json& json) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& j : json) out.emplace_back(j["file-path"].get<std::string>(), j["referenced-data-file"].get<std::string>());
  return out;
}

// Runs `fn`, turning a JSON type error (a malformed hand-over document) into InvalidArgument: JSON
// exceptions never leave this module.
template <typename F>
auto Guarded(std::string_view what, F fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("{}: {}", what, e.what());
  }
}

}  // namespace

Json ApplyTarget::ToJson() const {
  Json j = {{"table", table},     {"metadata_location", metadata_location}, {"key_columns", key_columns},
            {"created", created}, {"skipped", skipped},                     {"message", message}};
  j["snapshot_id"] = snapshot_id ? Json(*snapshot_id) : Json(nullptr);
  if (schema) j["schema"] = {{"schema", iceberg::SchemaToJson(*schema->schema)}, {"last_column_id", schema->last_column_id}};
  return j;
}

Result<ApplyTarget> ApplyTarget::FromJson(const Json& j) {
  return Guarded("apply target", [&]() -> Result<ApplyTarget> {
    ApplyTarget t;
    t.table = j.at("table").get<std::string>();
    t.metadata_location = j.at("metadata_location").get<std::string>();
    if (j.contains("snapshot_id") && !j["snapshot_id"].is_null()) t.snapshot_id = j["snapshot_id"].get<int64_t>();
    t.key_columns = j.value("key_columns", std::vector<std::string>{});
    t.created = j.value("created", false);
    t.skipped = j.value("skipped", false);
    t.message = j.value("message", std::string());
    if (j.contains("schema") && !j["schema"].is_null()) {
      iceberg::EvolvedSchema evolved;
      LS_ASSIGN_OR_RAISE_CTX(evolved.schema, iceberg::SchemaFromJson(j["schema"].at("schema")), "apply target schema");
      evolved.last_column_id = j["schema"].at("last_column_id").get<int32_t>();
      evolved.changed = true;
      t.schema = std::move(evolved);
    }
    return t;
  });
}

Result<std::shared_ptr<table::Table>> OpenPinned(const std::shared_ptr<catalog::Catalog>& catalog,
                                                 const ApplyTarget& target) {
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(target.table));
  LS_ASSIGN_OR_RAISE_CTX(auto metadata, catalog::ReadTableMetadata(*catalog->io(), target.metadata_location),
                         "opening {} at {}", target.table, target.metadata_location);
  catalog::LoadedTable loaded{id, target.metadata_location, std::move(metadata)};
  return std::make_shared<table::Table>(catalog, std::move(loaded));
}

Result<Json> StagedShardToJson(const StagedShard& s, const iceberg::TableMetadata& m) {
  Json positions = Json::array();
  for (const auto& p : s.positions) {
    ARROW_ASSIGN_OR_RAISE(auto data_file, iceberg::ContentFileToJson(*p.data_file, m));
    Json dv = nullptr;
    if (p.current_dv) {
      ARROW_ASSIGN_OR_RAISE(dv, iceberg::ContentFileToJson(*p.current_dv, m));
    }
    ARROW_ASSIGN_OR_RAISE(auto bytes, puffin::SerializeRoaring64Portable(
                                          p.positions, {puffin::Roaring64KeyLayout::kNonEmptyKeysOnly}));
    positions.push_back({{"data_file", data_file}, {"current_dv", dv}, {"positions", Hex(bytes)}});
  }
  ARROW_ASSIGN_OR_RAISE(auto data_files, FilesToJson(s.data_files, m));
  ARROW_ASSIGN_OR_RAISE(auto delete_files, FilesToJson(s.delete_files, m));
  return Json{{"data_files", data_files},
              {"delete_files", delete_files},
              {"positions", positions},
              {"resolved_data_files", s.resolved_data_files},
              {"rows_written", s.rows_written},
              {"data_bytes", s.data_bytes},
              {"missing_deletes", s.missing_deletes},
              {"equality_deleted", s.equality_deleted},
              {"changes", StatsToJson(s.changes)}};
}

Result<StagedShard> StagedShardFromJson(const Json& j, const iceberg::TableMetadata& m) {
  return Guarded("staged shard", [&]() -> Result<StagedShard> {
    StagedShard s;
    ARROW_ASSIGN_OR_RAISE(s.data_files, FilesFromJson(j.at("data_files"), m));
    ARROW_ASSIGN_OR_RAISE(s.delete_files, FilesFromJson(j.at("delete_files"), m));
    for (const auto& p : j.at("positions")) {
      PositionsInFile entry;
      ARROW_ASSIGN_OR_RAISE(auto data_file, iceberg::ContentFileFromJson(p.at("data_file"), m));
      entry.data_file = std::make_shared<iceberg::DataFile>(std::move(data_file));
      if (!p.at("current_dv").is_null()) {
        ARROW_ASSIGN_OR_RAISE(auto dv, iceberg::ContentFileFromJson(p["current_dv"], m));
        entry.current_dv = std::make_shared<iceberg::DataFile>(std::move(dv));
      }
      ARROW_ASSIGN_OR_RAISE(auto bytes, Unhex(p.at("positions").get<std::string>()));
      ARROW_ASSIGN_OR_RAISE(auto parsed, puffin::ParseRoaring64PortablePrefix(bytes));
      entry.positions = std::move(parsed.bitmap);
      s.positions.push_back(std::move(entry));
    }
    for (const auto& f : j.at("resolved_data_files")) s.resolved_data_files.insert(f.get<std::string>());
    s.rows_written = j.value("rows_written", int64_t{0});
    s.data_bytes = j.value("data_bytes", int64_t{0});
    s.missing_deletes = j.value("missing_deletes", int64_t{0});
    s.equality_deleted = j.value("equality_deleted", int64_t{0});
    if (j.contains("changes")) s.changes = StatsFromJson(j["changes"]);
    return s;
  });
}

Result<Json> StagedDeletesToJson(const StagedDeletes& d, const iceberg::TableMetadata& m) {
  ARROW_ASSIGN_OR_RAISE(auto added, FilesToJson(d.added, m));
  return Json{{"added", added}, {"removed", RemovedToJson(d.removed)}, {"rows_deleted", d.rows_deleted}};
}

Result<StagedDeletes> StagedDeletesFromJson(const Json& j, const iceberg::TableMetadata& m) {
  return Guarded("staged deletes", [&]() -> Result<StagedDeletes> {
    StagedDeletes d;
    ARROW_ASSIGN_OR_RAISE(d.added, FilesFromJson(j.at("added"), m));
    d.removed = RemovedFromJson(j.at("removed"));
    d.rows_deleted = j.value("rows_deleted", int64_t{0});
    return d;
  });
}

Result<StagedDeletes> WriteDeletes(const std::shared_ptr<table::Table>& pinned,
                                   const std::vector<PositionsInFile>& positions, std::vector<std::string>& written) {
  table::PositionDeletes deletes(pinned);
  for (const auto& p : positions) {
    ARROW_RETURN_NOT_OK(deletes.Add(p.data_file, p.current_dv, p.positions));
  }
  StagedDeletes out;
  out.rows_deleted = deletes.count();
  ARROW_ASSIGN_OR_RAISE(auto files, deletes.Write(written));
  // The files are handed on to a committer that did not write them: durable first (io/file_syncs.h).
  ARROW_RETURN_NOT_OK(pinned->AwaitFileSyncs());
  out.added = std::move(files.added);
  out.removed = std::move(files.removed);
  return out;
}

size_t DistinctFiles(const std::vector<iceberg::DataFile>& files) {
  std::set<std::string> paths;
  for (const auto& f : files) paths.insert(f.file_path);
  return paths.size();
}

Result<CommitFilesResult> CommitFiles(const std::shared_ptr<table::Table>& table, const FilesToCommit& files,
                                      const SinkConfig& config, const std::optional<std::string>& position_text,
                                      const ResolveAttempt& resolve) {
  CommitFilesResult result;
  std::optional<SourcePosition> position;
  if (position_text) {
    ARROW_ASSIGN_OR_RAISE(position, ParseSourcePosition(*position_text));
  }
  table::SnapshotUpdate update(table);
  for (const auto& f : files.data_files) update.AddDataFile(f);
  for (const auto& f : files.delete_files) update.AddDeleteFile(f);
  for (const auto& [path, referenced] : files.removed_deletes) update.RemoveDeleteFile(path, referenced);
  if (files.schema) update.SetSchema(*files.schema, files.schema_base ? *files.schema_base : *table->metadata());
  std::set<std::string> resolved;  // by `resolve`, for the attempt being made
  if (resolve) {
    update.SetAttemptDeletes([&](table::AttemptDeletes& deletes) {
      resolved.clear();
      return resolve(deletes, resolved);
    });
    // Whether there is anything to commit is known only once an attempt has resolved its keys.
    if (!position) update.SkipIfEmpty();
  } else if (update.empty() && !position) {
    result.outcome = CommitOutcome::kNothingToDo;
    result.message = "no changes to apply";
    return result;
  }
  for (const auto& [k, v] : config.snapshot_properties) update.SetSummaryProperty(k, v);
  if (config.sink_id) {
    update.SetSummaryProperty(kSummarySinkId, *config.sink_id);
    if (position) {
      update.SetSummaryProperty(PositionKey(*config.sink_id), position->text);
      // A copy in the table properties, committed atomically with it, survives snapshot expiry.
      update.SetTableProperty(PositionKey(*config.sink_id), position->text);
    }
  }
  // A progress marker only (an empty commit's operation is append anyway: this names it).
  if (update.empty() && !resolve) update.SetOperation(iceberg::kOperationAppend);
  const std::string sink_id = config.sink_id.value_or("");
  bool files_are_live = false;
  update.AddValidation([&](const table::CommitBase& base) -> Status {
    if (!sink_id.empty() && position) {
      ARROW_ASSIGN_OR_RAISE(auto committed, CommittedPosition(base.metadata, sink_id));
      if (committed && position->ordinal <= committed->ordinal) {
        if (!files.data_files.empty()) {
          ARROW_ASSIGN_OR_RAISE(auto live, base.live_data_files());
          files_are_live = live->count(files.data_files.front().file_path) > 0;
        }
        return WithFlag(AlreadyExists("already applied: position {} was committed by another writer (now at {})",
                                      position->text, committed->text),
                        ErrorFlag::kAlreadyApplied);
      }
    }
    const std::set<std::string>* sets[] = {&files.resolved_data_files, &resolved};
    for (const auto* set : sets) {
      if (set->empty()) continue;
      ARROW_ASSIGN_OR_RAISE(auto live, base.live_data_files());
      for (const auto& f : *set) {
        if (!live->count(f)) return CommitConflict("data file {} was removed by a concurrent commit", f);
      }
    }
    return Status::OK();
  });
  Failpoint(kFailpointAfterDataFiles);
  auto committed = update.Commit();
  if (committed.ok() && committed->skipped) {
    result.outcome = CommitOutcome::kNothingToDo;
    result.message = "no changes to apply";
    return result;
  }
  if (committed.ok()) {
    result.snapshot_id = committed->snapshot_id;
    result.attempts = committed->attempts;
    return result;
  }
  const Status& error = committed.status();
  if (HasFlag(error, ErrorFlag::kAlreadyApplied)) {
    result.outcome = CommitOutcome::kAlreadyApplied;
    result.message = error.message();
    result.files_are_live = files_are_live;
    return result;
  }
  return error;
}

}  // namespace lakesync::sink
