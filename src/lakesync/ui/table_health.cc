#include "lakesync/ui/table_health.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "lakesync/iceberg/manifest/manifest_reader.h"
#include "lakesync/iceberg/manifest/snapshot_manifests.h"
#include "lakesync/sink/progress.h"
#include "lakesync/table/scan.h"

namespace lakesync::ui {
namespace {

using Json = nlohmann::json;
using iceberg::FileContent;

Json OptionalNumber(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

// Snapshot ids are 64-bit: as JSON numbers JavaScript would round them (it has 53 bits), so the API
// gives them as strings.
Json SnapshotIdJson(std::optional<int64_t> id) { return id ? Json(std::to_string(*id)) : Json(nullptr); }

namespace {

std::string SummaryText(const iceberg::Snapshot& s, const std::string& key) {
  auto it = s.summary.find(key);
  return it == s.summary.end() ? std::string() : it->second;
}

double Ratio(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / whole : 0.0; }

// One row of the snapshot timeline.
Json SnapshotRow(const iceberg::Snapshot& s, bool current) {
  Json row = {{"snapshot_id", SnapshotIdJson(s.snapshot_id)},
              {"parent_snapshot_id", SnapshotIdJson(s.parent_snapshot_id)},
              {"sequence_number", s.sequence_number},
              {"timestamp_ms", s.timestamp_ms},
              {"operation", s.operation()},
              {"added_records", OptionalNumber(sink::SummaryNumber(s, "added-records"))},
              {"removed_records", OptionalNumber(sink::RemovedRecords(s))},
              {"live_records", OptionalNumber(sink::LiveRecords(s))},
              {"total_records", OptionalNumber(sink::SummaryNumber(s, "total-records"))},
              {"total_data_files", OptionalNumber(sink::SummaryNumber(s, "total-data-files"))},
              {"total_delete_files", OptionalNumber(sink::SummaryNumber(s, "total-delete-files"))},
              {"schema_id", s.schema_id ? Json(*s.schema_id) : Json(nullptr)},
              {"current", current}};
  const std::string sink_id = SummaryText(s, sink::kSummarySinkId);
  row["sink_id"] = sink_id.empty() ? Json(nullptr) : Json(sink_id);
  const std::string position = sink_id.empty() ? "" : SummaryText(s, sink::kSummarySourcePositionPrefix + sink_id);
  row["source_position"] = position.empty() ? Json(nullptr) : Json(position);
  return row;
}

// Totals of one kind of file.
struct Tally {
  int64_t files = 0, records = 0, bytes = 0;
  Json ToJson() const { return {{"files", files}, {"records", records}, {"bytes", bytes}}; }
};

// Power-of-two buckets of file sizes from 1 KiB (everything smaller in the first) up to the largest
// file, so a histogram of a few bytes to a few GiB stays readable.
Json SizeHistogram(const std::vector<int64_t>& sizes) {
  Json buckets = Json::array();
  if (sizes.empty()) return buckets;
  const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  int64_t lower = 0, upper = 1024;
  while (true) {
    int64_t n = 0;
    for (int64_t size : sizes) n += (size >= lower && size < upper) ? 1 : 0;
    buckets.push_back({{"min_bytes", lower}, {"max_bytes", upper}, {"files", n}});
    if (upper > largest) break;
    lower = upper;
    upper *= 2;
  }
  return buckets;
}

// The columns of one schema, top level (nested fields are part of their column's type).
Json SchemaFields(const iceberg::Schema& schema) {
  Json fields = Json::array();
  for (const auto& f : schema.fields()) {
    fields.push_back({{"id", f.id}, {"name", f.name}, {"type", f.type->ToString()}, {"required", f.required}});
  }
  return fields;
}

// The schemas oldest first, each with what changed from the one before (fields added, removed,
// renamed or retyped, by field id) and the first snapshot written with it.
Json SchemaHistory(const iceberg::TableMetadata& m) {
  auto schemas = m.schemas;
  std::sort(schemas.begin(), schemas.end(), [](const auto& a, const auto& b) { return a->schema_id() < b->schema_id(); });
  std::map<int32_t, const iceberg::Snapshot*> first_use;
  for (const auto& s : m.snapshots) {
    if (!s->schema_id) continue;
    auto& first = first_use[*s->schema_id];
    if (!first || s->sequence_number < first->sequence_number) first = s.get();
  }
  Json out = Json::array();
  const iceberg::Schema* previous = nullptr;
  for (const auto& schema : schemas) {
    Json changes = Json::array();
    if (previous) {
      std::map<int32_t, const iceberg::NestedField*> before, after;
      for (const auto& f : previous->fields()) before[f.id] = &f;
      for (const auto& f : schema->fields()) after[f.id] = &f;
      for (const auto& [id, f] : after) {
        auto it = before.find(id);
        if (it == before.end()) {
          changes.push_back(fmt::format("added {} {}", f->name, f->type->ToString()));
          continue;
        }
        if (it->second->name != f->name) changes.push_back(fmt::format("renamed {} to {}", it->second->name, f->name));
        if (it->second->type->ToString() != f->type->ToString()) {
          changes.push_back(fmt::format("{}: {} to {}", f->name, it->second->type->ToString(), f->type->ToString()));
        }
        if (it->second->required != f->required) {
          changes.push_back(fmt::format("{}: {}", f->name, f->required ? "now required" : "now optional"));
        }
      }
      for (const auto& [id, f] : before) {
        if (!after.count(id)) changes.push_back(fmt::format("dropped {}", f->name));
      }
    }
    Json row = {{"schema_id", schema->schema_id()},
                {"current", schema->schema_id() == m.current_schema_id},
                {"fields", SchemaFields(*schema)},
                {"changes", changes}};
    auto it = first_use.find(schema->schema_id());
    row["first_snapshot_id"] =
        SnapshotIdJson(it == first_use.end() ? std::nullopt : std::optional<int64_t>(it->second->snapshot_id));
    row["first_timestamp_ms"] = it == first_use.end() ? Json(nullptr) : Json(it->second->timestamp_ms);
    out.push_back(row);
    previous = schema.get();
  }
  return out;
}

}  // namespace

Json TableOverview(const table::Table& table) {
  const auto& m = *table.metadata();
  const auto current = m.CurrentSnapshot();
  Json row = {{"name", table.name()},
              {"namespace", catalog::NamespaceToString(table.identifier().ns)},
              {"format_version", m.format_version},
              {"location", m.location},
              {"snapshots", m.snapshots.size()},
              {"last_updated_ms", m.last_updated_ms}};
  row["current_snapshot_id"] = SnapshotIdJson(current ? std::optional<int64_t>(current->snapshot_id) : std::nullopt);
  row["last_commit_ms"] = current ? Json(current->timestamp_ms) : Json(nullptr);
  row["last_operation"] = current ? Json(current->operation()) : Json(nullptr);
  row["rows"] = current ? OptionalNumber(sink::LiveRecords(*current)) : Json(0);
  row["total_records"] = current ? OptionalNumber(sink::SummaryNumber(*current, "total-records")) : Json(0);
  row["data_files"] = current ? OptionalNumber(sink::SummaryNumber(*current, "total-data-files")) : Json(0);
  row["delete_files"] = current ? OptionalNumber(sink::SummaryNumber(*current, "total-delete-files")) : Json(0);
  row["size_bytes"] = current ? OptionalNumber(sink::SummaryNumber(*current, "total-files-size")) : Json(0);
  Json sinks = Json::object();
  if (auto positions = sink::CommittedPositions(m); positions.ok()) {
    for (const auto& [id, position] : *positions) sinks[id] = position.text;
  }
  row["sinks"] = sinks;
  return row;
}

Result<Json> TableHealth(const std::shared_ptr<table::Table>& table, const TableHealthOptions& options) {
  const auto& m = *table->metadata();
  const auto current = m.CurrentSnapshot();
  Json out = {{"table", TableOverview(*table)}};

  // Snapshots, oldest first (the newest `max_snapshots`).
  auto snapshots = m.snapshots;
  std::stable_sort(snapshots.begin(), snapshots.end(), [](const auto& a, const auto& b) {
    return std::tie(a->sequence_number, a->timestamp_ms) < std::tie(b->sequence_number, b->timestamp_ms);
  });
  Json timeline = Json::array();
  const size_t skip = snapshots.size() > options.max_snapshots ? snapshots.size() - options.max_snapshots : 0;
  for (size_t i = skip; i < snapshots.size(); ++i) {
    timeline.push_back(SnapshotRow(*snapshots[i], current && current->snapshot_id == snapshots[i]->snapshot_id));
  }
  out["snapshots"] = timeline;
  out["snapshots_omitted"] = skip;
  out["schemas"] = SchemaHistory(m);
  Json spec_json = Json::array();
  if (auto spec = m.Spec()) {
    for (const auto& f : spec->fields()) {
      spec_json.push_back({{"name", f.name}, {"transform", f.transform.ToString()}, {"source_id", f.source_id}});
    }
  }
  out["partition_spec"] = spec_json;

  const int64_t target_size = m.PropertyAsInt(iceberg::kPropTargetFileSize, iceberg::kDefaultTargetFileSize);
  const auto& t = options.compaction;
  const int64_t small_below = static_cast<int64_t>(std::llround(static_cast<double>(target_size) * t.min_file_size_ratio));

  // Delete files by kind: every live entry of the current snapshot's delete manifests (also those that
  // no longer apply to any data file, which readers still open).
  Tally dvs, position_files, equality_files;
  std::set<std::string> dv_puffin_files;
  // Data files as readers see them: the scan planner's tasks, each with the deletes that apply to it
  // by the spec's sequence-number rules (the same planning every scan uses).
  Tally data;
  std::vector<int64_t> sizes;
  int64_t with_dv = 0, with_position_files = 0, with_equality_files = 0, dv_deleted_rows = 0;
  int64_t small_files = 0, delete_heavy_files = 0, many_deletes_files = 0;
  struct Partition {
    std::string name;
    int32_t spec_id = 0;
    Tally data;
    int64_t small_files = 0, files_with_deletes = 0, deleted_rows = 0;
  };
  std::map<std::string, Partition> partitions;
  if (current) {
    const auto io = table->io();
    LS_ASSIGN_OR_RAISE_CTX(auto manifests, iceberg::ReadSnapshotManifests(*io, m, *current), "table {} snapshot {}",
                           table->name(), current->snapshot_id);
    for (const auto& manifest : manifests) {
      if (manifest.content != iceberg::ManifestContent::kDeletes) continue;
      LS_ASSIGN_OR_RAISE_CTX(std::string bytes, io->ReadAll(manifest.manifest_path), "table {}: reading manifest {}",
                             table->name(), manifest.manifest_path);
      LS_ASSIGN_OR_RAISE_CTX(auto entries, iceberg::ReadManifest(bytes, manifest, &m), "table {}: manifest {}",
                             table->name(), manifest.manifest_path);
      for (const auto& e : entries) {
        if (e.status == iceberg::ManifestEntryStatus::kDeleted) continue;
        const auto& f = *e.data_file;
        if (f.IsDeletionVector()) {
          ++dvs.files;
          dvs.records += f.record_count;
          dvs.bytes += f.content_size_in_bytes.value_or(0);
          dv_puffin_files.insert(f.file_path);
        } else if (f.content == FileContent::kPositionDeletes) {
          ++position_files.files;
          position_files.records += f.record_count;
          position_files.bytes += f.file_size_in_bytes;
        } else if (f.content == FileContent::kEqualityDeletes) {
          ++equality_files.files;
          equality_files.records += f.record_count;
          equality_files.bytes += f.file_size_in_bytes;
        }
      }
    }
    table::ScanOptions scan_options;
    scan_options.snapshot_id = current->snapshot_id;
    LS_ASSIGN_OR_RAISE_CTX(auto scan, table::TableScan::Make(table, scan_options), "table {}", table->name());
    LS_ASSIGN_OR_RAISE_CTX(auto tasks, scan->PlanFiles(), "table {}", table->name());
    const auto schema = m.Schema();
    for (const auto& task : tasks) {
      const auto& f = *task.file;
      ++data.files;
      data.records += f.record_count;
      data.bytes += f.file_size_in_bytes;
      sizes.push_back(f.file_size_in_bytes);
      const bool small = f.file_size_in_bytes < small_below;
      small_files += small ? 1 : 0;
      // Rows deleted from this file where the deletes tell exactly: its deletion vector, or position
      // delete files scoped to it alone.
      int64_t deleted = 0;
      if (task.deletion_vector) {
        ++with_dv;
        deleted += task.deletion_vector->record_count;
        dv_deleted_rows += task.deletion_vector->record_count;
      }
      for (const auto& d : task.position_deletes) {
        if (d->referenced_data_file && *d->referenced_data_file == f.file_path) deleted += d->record_count;
      }
      with_position_files += task.position_deletes.empty() ? 0 : 1;
      with_equality_files += task.equality_deletes.empty() ? 0 : 1;
      const int64_t delete_files = (task.deletion_vector ? 1 : 0) + static_cast<int64_t>(task.position_deletes.size()) +
                                   static_cast<int64_t>(task.equality_deletes.size());
      if (f.record_count > 0 && Ratio(deleted, f.record_count) >= t.delete_ratio_threshold) ++delete_heavy_files;
      if (delete_files >= t.delete_file_threshold) ++many_deletes_files;
      const std::string key = iceberg::PartitionTupleKey(f);
      auto& p = partitions[key];
      if (p.data.files == 0) {
        auto spec = m.SpecById(f.spec_id);
        p.spec_id = f.spec_id;
        p.name = spec && schema && !spec->IsUnpartitioned() ? spec->PartitionPath(*schema, f.partition) : "";
      }
      ++p.data.files;
      p.data.records += f.record_count;
      p.data.bytes += f.file_size_in_bytes;
      p.small_files += small ? 1 : 0;
      p.files_with_deletes += delete_files > 0 ? 1 : 0;
      p.deleted_rows += deleted;
    }
  }
  const int64_t deleted_rows = current ? sink::SummaryNumber(*current, "total-position-deletes").value_or(0) : 0;
  out["files"] = {{"data", data.ToJson()},
                  {"target_file_size_bytes", target_size},
                  {"small_file_below_bytes", small_below},
                  {"small_files", small_files},
                  {"average_file_bytes", data.files ? data.bytes / data.files : 0},
                  {"with_deletion_vector", with_dv},
                  {"deletion_vector_ratio", Ratio(with_dv, data.files)},
                  {"with_position_delete_files", with_position_files},
                  {"with_equality_delete_files", with_equality_files},
                  {"rows_deleted_by_position", deleted_rows},
                  {"rows_deleted_by_deletion_vectors", dv_deleted_rows},
                  {"deleted_ratio", Ratio(deleted_rows, data.records)},
                  {"size_histogram", SizeHistogram(sizes)}};
  out["delete_files"] = {{"deletion_vectors", dvs.ToJson()},
                         {"deletion_vector_puffin_files", dv_puffin_files.size()},
                         {"position_delete_files", position_files.ToJson()},
                         {"equality_delete_files", equality_files.ToJson()}};

  std::vector<Partition> by_size;
  for (auto& [key, p] : partitions) by_size.push_back(std::move(p));
  std::stable_sort(by_size.begin(), by_size.end(), [](const auto& a, const auto& b) { return a.data.bytes > b.data.bytes; });
  Json parts = Json::array();
  int64_t partitions_with_small_files = 0;
  for (const auto& p : by_size) {
    if (p.small_files >= t.min_input_files) ++partitions_with_small_files;
    if (parts.size() >= options.max_partitions) continue;
    parts.push_back({{"partition", p.name},
                     {"spec_id", p.spec_id},
                     {"data_files", p.data.files},
                     {"records", p.data.records},
                     {"bytes", p.data.bytes},
                     {"small_files", p.small_files},
                     {"files_with_deletes", p.files_with_deletes},
                     {"deleted_rows", p.deleted_rows}});
  }
  out["partitions"] = parts;
  out["partition_count"] = by_size.size();

  // The compaction hint: each reason with the numbers behind it, so a person can judge.
  Json reasons = Json::array();
  if (partitions_with_small_files > 0) {
    reasons.push_back(fmt::format(
        "{} of {} data files are smaller than {} bytes ({:.0f} % of the {}-byte target size); {} partition(s) hold at "
        "least {} of them",
        small_files, data.files, small_below, t.min_file_size_ratio * 100, target_size, partitions_with_small_files,
        t.min_input_files));
  }
  if (delete_heavy_files > 0) {
    reasons.push_back(fmt::format("{} data file(s) have at least {:.0f} % of their rows deleted", delete_heavy_files,
                                  t.delete_ratio_threshold * 100));
  }
  if (many_deletes_files > 0) {
    reasons.push_back(fmt::format("{} data file(s) have {} or more delete files to apply when read",
                                  many_deletes_files, t.delete_file_threshold));
  }
  if (equality_files.files > 0) {
    reasons.push_back(fmt::format("{} equality delete file(s) are applied to every older data file of their partition "
                                  "on each read",
                                  equality_files.files));
  }
  out["compaction"] = {{"needed", !reasons.empty()},
                       {"reasons", reasons},
                       {"small_files", small_files},
                       {"partitions_with_small_files", partitions_with_small_files},
                       {"delete_heavy_files", delete_heavy_files},
                       {"files_with_many_deletes", many_deletes_files},
                       {"equality_delete_files", equality_files.files},
                       {"thresholds",
                        {{"min_file_size_bytes", small_below},
                         {"min_input_files", t.min_input_files},
                         {"delete_ratio_threshold", t.delete_ratio_threshold},
                         {"delete_file_threshold", t.delete_file_threshold}}}};
  return out;
}

}  // namespace lakesync::ui
