// lakesync table compact, rewrite-manifests, expire-snapshots and remove-orphans: table maintenance on the
// command line (docs/maintenance.md).
#include <fmt/format.h>

#include <chrono>

#include "cli.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/engine/job_config.h"
#include "lakesync/maintenance/compact.h"
#include "lakesync/maintenance/expire_snapshots.h"
#include "lakesync/maintenance/remove_orphans.h"
#include "lakesync/maintenance/rewrite_manifests.h"

namespace lakesync::cli {
namespace {

// --older-than: a duration back from now (3d, 12h, 1h30m: the job file's duration syntax) or a point
// in time (ISO-8601, or epoch milliseconds), or `now`.
Result<int64_t> OlderThanMs(const std::string& text) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  if (text == "now") return now_ms + 1;
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text.back())) == 0) {
    ARROW_ASSIGN_OR_RAISE(auto ago, engine::ParseDuration(nlohmann::json(text), "--older-than"));
    return now_ms - std::chrono::duration_cast<std::chrono::milliseconds>(ago).count();
  }
  auto at = delta::ParseTimestampMillis(text);
  if (!at.ok()) {
    return InvalidArgument("--older-than: '{}' is neither a duration (3d, 12h), a time (ISO-8601 or epoch ms) nor now", text);
  }
  return *at;
}

// --max-duration: a step's time budget in the job file's duration syntax (10m, 90s); 0 allowed (one
// unit of work: a bin, a file). maintenance/budget.h says what each step does when it runs out.
constexpr char kMaxDurationHelp[] = "time budget (10m, 90s; 0: one unit of work): ";

Result<std::optional<std::chrono::milliseconds>> MaxDuration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(auto d, engine::ParseDuration(nlohmann::json(text), "--max-duration", /*allow_zero=*/true));
  return std::chrono::milliseconds(d);
}

void RegisterExpireSnapshots(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table, older_than, max_duration;
    std::optional<int32_t> retain_last;
    bool dry_run = false, json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand(
      "expire-snapshots",
      "Remove old snapshots and the files only they reference (keeps refs, the newest snapshots and lakesync's "
      "job positions)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--older-than", a->older_than,
                  "expire snapshots older than this: a duration back from now (3d, 12h), a time (ISO-8601) or now; "
                  "default: the table's history.expire.max-snapshot-age-ms, else 5 days");
  cmd->add_option("--retain-last", a->retain_last,
                  "keep at least this many of each branch's newest snapshots (default: the table's "
                  "history.expire.min-snapshots-to-keep, else 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-duration", a->max_duration,
                  std::string(kMaxDurationHelp) +
                      "the commit always happens; reading the manifests and deleting files stop when it is spent "
                      "(at least one file is deleted) and the files left are orphans for remove-orphans (default: no "
                      "limit)");
  cmd->add_flag("--dry-run", a->dry_run, "say what would expire and which files would be deleted; change nothing");
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      maintenance::ExpireSnapshotsOptions options;
      if (!a->older_than.empty()) {
        ARROW_ASSIGN_OR_RAISE(options.older_than_ms, OlderThanMs(a->older_than));
      }
      options.retain_last = a->retain_last;
      options.dry_run = a->dry_run;
      ARROW_ASSIGN_OR_RAISE(options.max_duration, MaxDuration(a->max_duration));
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      LS_ASSIGN_OR_RAISE_CTX(auto r, maintenance::ExpireSnapshots(*t, options), "expire-snapshots {}", t->name());
      if (a->json) {
        nlohmann::json j = {{"table", t->name()},
                            {"dry_run", a->dry_run},
                            {"expired_snapshot_ids", r.expired_snapshot_ids},
                            {"retained_snapshots", r.retained_snapshots},
                            {a->dry_run ? "files_to_delete" : "deleted_files", r.deleted_files},
                            {"undeleted_files", r.undeleted_files},
                            {"left_files", r.left_files},
                            {"files_unknown", r.files_unknown},
                            {"positions_kept_in_properties", r.positions_kept}};
        Print(j.dump() + "\n");
        return Status::OK();
      }
      const char* verb = a->dry_run ? "would expire" : "expired";
      Print(fmt::format("{} {} {} snapshot(s), kept {}; {} {} file(s){}\n", t->name(), verb,
                        r.expired_snapshot_ids.size(), r.retained_snapshots,
                        a->dry_run ? "would delete" : "deleted", r.deleted_files.size(),
                        r.positions_kept.empty() ? "" : fmt::format("; job positions kept in the table properties "
                                                                    "for {}", fmt::join(r.positions_kept, ", "))));
      for (const auto& f : r.undeleted_files) Print(fmt::format("could not delete {} (left as an orphan)\n", f));
      if (!r.left_files.empty()) {
        Print(fmt::format("the time budget ran out: {} file(s) left as orphans for remove-orphans\n",
                          r.left_files.size()));
      }
      if (r.files_unknown) {
        Print("the time budget ran out reading manifests: files only the expired snapshots referenced that were not "
              "read are left as orphans for remove-orphans\n");
      }
      return Status::OK();
    };
  });
}

void RegisterRemoveOrphans(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table, older_than = "3d", max_duration;
    bool apply = false, json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand(
      "remove-orphans",
      "List (or with --apply delete) files under the table's location that its metadata does not reference");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--older-than", a->older_than,
                  "only files last modified before this: a duration back from now (3d, 12h), a time (ISO-8601) "
                  "or now; a safety window for writes in progress (default 3d)");
  cmd->add_flag("--apply", a->apply, "delete the orphans (without it: list them only)");
  cmd->add_option("--max-duration", a->max_duration,
                  std::string(kMaxDurationHelp) +
                      "listing (directory by directory) and, with --apply, deleting stop when it is spent (after at "
                      "least one orphan found and deleted); a rerun lists and deletes the rest (default: no limit)");
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      maintenance::RemoveOrphansOptions options;
      ARROW_ASSIGN_OR_RAISE(options.older_than_ms, OlderThanMs(a->older_than));
      options.apply = a->apply;
      ARROW_ASSIGN_OR_RAISE(options.max_duration, MaxDuration(a->max_duration));
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      LS_ASSIGN_OR_RAISE_CTX(auto r, maintenance::RemoveOrphans(*t, options), "remove-orphans {}", t->name());
      if (a->json) {
        nlohmann::json j = {{"table", t->name()},          {"applied", a->apply},
                            {"files_listed", r.files_listed}, {a->apply ? "deleted" : "orphans", r.orphans},
                            {"orphan_bytes", r.orphan_bytes}, {"too_young", r.too_young},
                            {"undeleted", r.undeleted},    {"left", r.left},
                            {"unlisted_directories", r.unlisted_directories}};
        Print(j.dump() + "\n");
        return Status::OK();
      }
      for (const auto& f : r.orphans) Print(f + "\n");
      Print(fmt::format("{}: {} orphan file(s), {} bytes{}; {} unreferenced file(s) newer than --older-than kept\n",
                        t->name(), r.orphans.size(), r.orphan_bytes, a->apply ? " deleted" : " (dry run: --apply deletes)",
                        r.too_young.size()));
      for (const auto& f : r.undeleted) Print(fmt::format("could not delete {}\n", f));
      if (!r.left.empty()) {
        Print(fmt::format("the time budget ran out: {} orphan(s) left for the next run\n", r.left.size()));
      }
      if (!r.unlisted_directories.empty()) {
        Print(fmt::format("the time budget ran out listing: {} directory(ies) not listed, for the next run: {}\n",
                          r.unlisted_directories.size(), fmt::join(r.unlisted_directories, ", ")));
      }
      return Status::OK();
    };
  });
}

void RegisterCompact(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table, where, max_duration;
    std::optional<int64_t> target_file_size;
    double min_deleted_ratio = 0.3;
    int64_t max_files = 0;
    int64_t sort_memory = 256LL << 20;
    bool dry_run = false, json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand(
      "compact",
      "Rewrite data files with many deleted rows or too small into larger ones, deletes applied, in one replace "
      "commit (bin-packed per partition, sorted by the table's sort order)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--where", a->where,
                  "only files that may hold rows matching this filter (the syntax of scan --filter), e.g. "
                  "\"day >= '2026-03-01'\"");
  cmd->add_option("--target-file-size", a->target_file_size,
                  "target size of the new files in bytes (default: the table's write.target-file-size-bytes, else "
                  "512 MiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-deleted-ratio", a->min_deleted_ratio,
                  "rewrite files whose deleted rows (deletion vectors, position and equality deletes) are at least "
                  "this fraction of their rows; smaller files than 75% of the target are rewritten too (default 0.3)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--max-files", a->max_files, "rewrite at most this many files in this run (default: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-duration", a->max_duration,
                  std::string(kMaxDurationHelp) +
                      "bins are rewritten until it is spent (at least one) and those finished are committed; the "
                      "rest are left for the next run (default: no limit)");
  cmd->add_option("--sort-memory", a->sort_memory,
                  "memory in bytes for sorting a bin by the table's sort order (rows decoded); a bigger bin is sorted "
                  "in runs spilled to temporary files under $TMPDIR and merged (default 268435456: 256 MiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--dry-run", a->dry_run, "say which files would be rewritten; change nothing");
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      maintenance::CompactOptions options;
      options.sort_memory_bytes = a->sort_memory;
      options.where = a->where;
      options.target_file_size = a->target_file_size;
      options.min_deleted_ratio = a->min_deleted_ratio;
      options.max_files = a->max_files;
      options.dry_run = a->dry_run;
      ARROW_ASSIGN_OR_RAISE(options.max_duration, MaxDuration(a->max_duration));
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      LS_ASSIGN_OR_RAISE_CTX(auto r, maintenance::Compact(t, options), "compact {}", t->name());
      if (a->json) {
        nlohmann::json j = {{"table", t->name()},
                            {"dry_run", a->dry_run},
                            {"candidate_files", r.candidate_files},
                            {"rewritten_data_files", r.rewritten_data_files},
                            {"rewritten_bytes", r.rewritten_bytes},
                            {"rewritten_records", r.rewritten_records},
                            {"removed_delete_files", r.removed_delete_files},
                            {"added_data_files", r.added_data_files},
                            {"added_bytes", r.added_bytes},
                            {"written_records", r.written_records},
                            {"bins", r.bins},
                            {"bins_left", r.bins_left},
                            {"files_left", r.files_left},
                            {"sort_spilled_runs", r.sort_spilled_runs},
                            {"attempts", r.attempts},
                            {"snapshot_id", r.snapshot_id ? nlohmann::json(*r.snapshot_id) : nlohmann::json()},
                            {"rewritten_files", r.rewritten_files}};
        Print(j.dump() + "\n");
        return Status::OK();
      }
      if (a->dry_run) {
        for (const auto& f : r.rewritten_files) Print(f + "\n");
        Print(fmt::format("{} would rewrite {} data file(s) ({} bytes, {} rows before deletes) in {} bin(s) and "
                          "remove {} delete file(s)\n",
                          t->name(), r.rewritten_data_files, r.rewritten_bytes, r.rewritten_records, r.bins,
                          r.removed_delete_files));
        return Status::OK();
      }
      if (!r.snapshot_id) {
        Print(fmt::format("{}: nothing to compact\n", t->name()));
        return Status::OK();
      }
      Print(fmt::format("compacted {}: {} data file(s) into {} ({} live rows), {} delete file(s) removed; snapshot "
                        "{}\n",
                        t->name(), r.rewritten_data_files, r.added_data_files, r.written_records,
                        r.removed_delete_files, *r.snapshot_id));
      if (r.bins_left > 0) {
        Print(fmt::format("the time budget ran out: {} bin(s) of {} file(s) left for the next run\n", r.bins_left,
                          r.files_left));
      }
      return Status::OK();
    };
  });
}

void RegisterRewriteManifests(Cli& cli, CLI::App* table_cmd) {
  struct Args {
    std::string table;
    std::optional<int64_t> target_size;
    bool dry_run = false, json = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = table_cmd->add_subcommand(
      "rewrite-manifests",
      "Rewrite the current snapshot's small manifests into fewer, larger ones per partition spec and content "
      "(one replace commit, no data change)");
  cmd->add_option("table", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--target-size", a->target_size,
                  "target manifest size in bytes (default: the table's commit.manifest.target-size-bytes, else 8 MiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--dry-run", a->dry_run, "say how many manifests would be rewritten; change nothing");
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      maintenance::RewriteManifestsOptions options;
      options.target_size_bytes = a->target_size;
      options.dry_run = a->dry_run;
      ARROW_ASSIGN_OR_RAISE(auto t, LoadNamedTable(cli.global, a->table));
      LS_ASSIGN_OR_RAISE_CTX(auto r, maintenance::RewriteManifests(t, options), "rewrite-manifests {}", t->name());
      if (a->json) {
        nlohmann::json j = {{"table", t->name()},
                            {"dry_run", a->dry_run},
                            {"manifests_before", r.manifests_before},
                            {"manifests_rewritten", r.manifests_rewritten},
                            {"manifests_created", r.manifests_created},
                            {"manifests_kept", r.manifests_kept},
                            {"entries", r.entries},
                            {"snapshot_id", r.snapshot_id ? nlohmann::json(*r.snapshot_id) : nlohmann::json()}};
        Print(j.dump() + "\n");
        return Status::OK();
      }
      if (a->dry_run || !r.snapshot_id) {
        Print(fmt::format("{}: {} of {} manifest(s) {}\n", t->name(), r.manifests_rewritten, r.manifests_before,
                          r.manifests_rewritten ? "would be rewritten" : "need rewriting"));
        return Status::OK();
      }
      Print(fmt::format("rewrote {} of {} manifest(s) of {} into {}; snapshot {}\n", r.manifests_rewritten,
                        r.manifests_before, t->name(), r.manifests_created, *r.snapshot_id));
      return Status::OK();
    };
  });
}

}  // namespace

void RegisterTableMaintenance(Cli& cli, CLI::App* table_cmd) {
  RegisterCompact(cli, table_cmd);
  RegisterRewriteManifests(cli, table_cmd);
  RegisterExpireSnapshots(cli, table_cmd);
  RegisterRemoveOrphans(cli, table_cmd);
}

}  // namespace lakesync::cli
