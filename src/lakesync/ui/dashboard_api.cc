#include "lakesync/ui/dashboard_api.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "lakesync/common/logging.h"
#include "lakesync/engine/job_status.h"
#include "lakesync/engine/lag.h"
#include "lakesync/table/table.h"
#include "lakesync/ui/job_history.h"

namespace lakesync::ui {

using Json = nlohmann::json;

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Visible(const NamespaceFilter& visible, const catalog::Namespace& ns) { return !visible || visible(ns); }

// The namespace of a job's target (a table name or a template such as db.orders_{region}).
std::optional<catalog::Namespace> TargetNamespace(const std::string& target) {
  auto id = catalog::TableIdentifier::Parse(target);
  if (!id.ok()) return std::nullopt;
  return id->ns;
}

Json ErrorJson(const Status& status) {
  return {{"message", status.message()}, {"kind", std::string(ErrorKindName(KindOf(status)))}};
}

}  // namespace

// One job file of the jobs folder, opened.
struct Dashboard::JobFile {
  std::string path;
  std::unique_ptr<engine::JobRunner> runner;  // null when the file could not be opened
  Status error;
};

Result<std::unique_ptr<Dashboard>> Dashboard::Make(DashboardOptions options) {
  if (!options.catalog) return InvalidArgument("the dashboard needs a catalog");
  if (!options.jobs_dir.empty()) {
    if (!options.open_job) return InvalidArgument("--jobs {}: no way to open job files was given", options.jobs_dir);
    std::error_code ec;
    if (!std::filesystem::is_directory(options.jobs_dir, ec)) {
      return NotFound("--jobs {}: not a folder", options.jobs_dir);
    }
  }
  return std::unique_ptr<Dashboard>(new Dashboard(std::move(options)));
}

Result<std::vector<std::shared_ptr<table::Table>>> Dashboard::LoadTables(
    const NamespaceFilter& visible, std::vector<std::pair<std::string, Status>>* failed) {
  std::vector<std::shared_ptr<table::Table>> tables;
  auto& catalog = *options_.catalog;
  // Every level, depth first: a.b after a.
  std::vector<catalog::Namespace> todo = {catalog::Namespace{}};
  while (!todo.empty()) {
    auto parent = todo.back();
    todo.pop_back();
    ARROW_ASSIGN_OR_RAISE(auto children, catalog.ListNamespaces(parent));
    for (auto it = children.rbegin(); it != children.rend(); ++it) todo.push_back(*it);
    if (parent.empty() || !Visible(visible, parent)) continue;
    ARROW_ASSIGN_OR_RAISE(auto ids, catalog.ListTables(parent));
    std::sort(ids.begin(), ids.end());
    for (const auto& id : ids) {
      auto t = table::Table::Load(options_.catalog, id);
      // A table dropped between the listing and the load is simply gone (a table the catalog still
      // has whose metadata file is missing is not).
      if (!t.ok() && KindOf(t.status()) == ErrorKind::kNotFound) {
        auto exists = catalog.TableExists(id);
        if (exists.ok() && !*exists) continue;
      }
      if (!t.ok() && failed) {
        failed->emplace_back(id.ToString(), t.status());
        continue;
      }
      LS_RETURN_NOT_OK_CTX(t.status(), "table {}", id.ToString());
      tables.push_back(*t);
    }
  }
  return tables;
}

Result<Json> Dashboard::Overview(const NamespaceFilter& visible) {
  auto& catalog = *options_.catalog;
  Json namespaces = Json::array();
  std::vector<catalog::Namespace> todo = {catalog::Namespace{}};
  while (!todo.empty()) {
    auto parent = todo.back();
    todo.pop_back();
    ARROW_ASSIGN_OR_RAISE(auto children, catalog.ListNamespaces(parent));
    for (auto it = children.rbegin(); it != children.rend(); ++it) todo.push_back(*it);
    if (!parent.empty() && Visible(visible, parent)) namespaces.push_back(catalog::NamespaceToString(parent));
  }
  std::vector<std::pair<std::string, Status>> failed;
  ARROW_ASSIGN_OR_RAISE(auto tables, LoadTables(visible, &failed));
  Json unreadable = Json::array();
  for (const auto& [name, status] : failed) unreadable.push_back({{"name", name}, {"error", ErrorJson(status)}});
  Json rows = Json::array();
  int64_t total_rows = 0, total_bytes = 0;
  std::optional<int64_t> last_commit;
  for (const auto& t : tables) {
    auto row = TableOverview(*t);
    if (row["rows"].is_number()) total_rows += row["rows"].get<int64_t>();
    if (row["size_bytes"].is_number()) total_bytes += row["size_bytes"].get<int64_t>();
    if (row["last_commit_ms"].is_number()) {
      last_commit = std::max(last_commit.value_or(0), row["last_commit_ms"].get<int64_t>());
    }
    rows.push_back(std::move(row));
  }
  return Json{{"catalog", catalog.name()},
              {"namespaces", namespaces},
              {"tables", rows},
              {"unreadable_tables", unreadable},
              {"totals",
               {{"tables", rows.size()},
                {"rows", total_rows},
                {"size_bytes", total_bytes},
                {"last_commit_ms", last_commit ? Json(*last_commit) : Json(nullptr)}}},
              {"jobs_dir", options_.jobs_dir.empty() ? Json(nullptr) : Json(options_.jobs_dir)}};
}

Result<Json> Dashboard::Table(const std::string& name, const NamespaceFilter& visible) {
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(name));
  if (!Visible(visible, id.ns)) return NotFound("table {} does not exist", name);
  ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(options_.catalog, id));
  return TableHealth(t, options_.health);
}

Result<std::vector<Dashboard::JobFile>> Dashboard::ScanJobFiles() {
  std::vector<JobFile> out;
  if (options_.jobs_dir.empty()) return out;
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.jobs_dir, ec)) {
    const auto ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      paths.push_back(entry.path().string());
    }
  }
  if (ec) return IOError("--jobs {}: {}", options_.jobs_dir, ec.message());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    JobFile f;
    f.path = path;
    auto runner = options_.open_job(path);
    if (runner.ok()) {
      f.runner = std::move(*runner);
    } else {
      // One broken job file must not hide the others: it is listed with its error.
      f.error = runner.status();
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result<Json> Dashboard::Jobs(const NamespaceFilter& visible) {
  ARROW_ASSIGN_OR_RAISE(auto tables, LoadTables(visible));
  auto histories = CollectSinkHistories(tables);
  ARROW_ASSIGN_OR_RAISE(auto files, ScanJobFiles());
  std::map<std::string, Json> jobs;  // by sink id
  for (const auto& [id, h] : histories) {
    Json tables_json = Json::object();
    for (const auto& [table, position] : h.positions) tables_json[table] = position;
    Json j = {{"sink_id", id}, {"tables", tables_json}, {"runs", h.runs.size()}, {"job_file", nullptr}};
    j["last_commit_ms"] = h.runs.empty() ? Json(nullptr) : Json(h.runs.back().timestamp_ms);
    j["position"] = h.runs.empty() ? Json(nullptr) : Json(h.runs.back().position);
    jobs[id] = std::move(j);
  }
  Json job_files = Json::array();
  for (auto& f : files) {
    if (!f.runner) {
      job_files.push_back({{"file", f.path}, {"error", ErrorJson(f.error)}});
      continue;
    }
    const auto& job = f.runner->job();
    if (auto ns = TargetNamespace(job.sink.table); ns && !Visible(visible, *ns)) continue;
    const std::string id = f.runner->sink_id();
    job_files.push_back({{"file", f.path}, {"name", job.name}, {"sink_id", id}, {"target", job.sink.table}});
    auto& j = jobs[id];
    if (j.is_null()) {
      j = {{"sink_id", id}, {"tables", Json::object()}, {"runs", 0}, {"last_commit_ms", nullptr}, {"position", nullptr}};
    }
    j["job_file"] = f.path;
    j["job"] = job.name;
    j["source"] = f.runner->DescribeSource();
    auto status = engine::JobStatusJson(*f.runner);
    if (status.ok()) {
      for (const char* key : {"lag", "lag_seconds", "up_to_date", "source_latest", "committed_position", "running",
                              "last_error"}) {
        j[key] = status->contains(key) ? (*status)[key] : Json(nullptr);
      }
    } else {
      j["status_error"] = ErrorJson(status.status());
    }
  }
  Json list = Json::array();
  for (auto& [id, j] : jobs) list.push_back(std::move(j));
  return Json{{"jobs", list},
              {"job_files", job_files},
              {"jobs_dir", options_.jobs_dir.empty() ? Json(nullptr) : Json(options_.jobs_dir)}};
}

Result<Json> Dashboard::Job(const std::string& sink_id, const NamespaceFilter& visible) {
  ARROW_ASSIGN_OR_RAISE(auto tables, LoadTables(visible));
  auto histories = CollectSinkHistories(tables);
  ARROW_ASSIGN_OR_RAISE(auto files, ScanJobFiles());
  JobFile* file = nullptr;
  for (auto& f : files) {
    if (!f.runner || f.runner->sink_id() != sink_id) continue;
    if (auto ns = TargetNamespace(f.runner->job().sink.table); ns && !Visible(visible, *ns)) continue;
    file = &f;
    break;
  }
  auto it = histories.find(sink_id);
  if (it == histories.end() && !file) {
    return NotFound("sink id {} has no commits in the catalog{}", sink_id,
                    options_.jobs_dir.empty() ? "" : " and no job file in " + options_.jobs_dir);
  }
  SinkHistory history = it == histories.end() ? SinkHistory{} : it->second;
  const size_t total_runs = history.runs.size();
  if (history.runs.size() > options_.max_runs) {
    history.runs.erase(history.runs.begin(), history.runs.end() - static_cast<std::ptrdiff_t>(options_.max_runs));
  }
  Json runs = Json::array();
  for (const auto& r : history.runs) runs.push_back(r.ToJson());
  Json tables_json = Json::object();
  for (const auto& [table, position] : history.positions) tables_json[table] = position;
  Json out = {{"sink_id", sink_id},
              {"tables", tables_json},
              {"runs", runs},
              {"runs_total", total_runs},
              {"job_file", nullptr},
              {"status", nullptr},
              {"lag_history", nullptr},
              {"lag_history_note", nullptr}};
  if (!file) {
    out["lag_history_note"] = options_.jobs_dir.empty()
                                  ? "no --jobs folder was given: the source is unknown, so no lag against it"
                                  : "no job file in the --jobs folder has this sink id";
    return out;
  }
  out["job_file"] = file->path;
  out["job"] = file->runner->job().name;
  out["source"] = file->runner->DescribeSource();
  auto status = engine::JobStatusJson(*file->runner);
  if (!status.ok()) {
    out["status_error"] = ErrorJson(status.status());
    return out;
  }
  out["status"] = *status;
  // The lag over time: the source's commits after the oldest position shown, with their times.
  const auto& latest = (*status)["source_latest"];
  if (!history.runs.empty() && latest.is_number_integer()) {
    const int64_t through = latest.get<int64_t>();
    int64_t after = history.runs.front().ordinal;
    for (const auto& r : history.runs) after = std::min(after, r.ordinal);
    after = std::max(after, through - static_cast<int64_t>(options_.max_source_commits));
    auto commits = engine::ListSourceCommits(file->runner->source(), after, through, options_.max_source_commits);
    if (commits.ok()) {
      out["lag_history"] = LagHistory(history.runs, *commits, NowMs());
      out["source_commits"] = commits->size();
    } else {
      out["lag_history_note"] = "the source's commits could not be read: " + commits.status().message();
    }
  } else if (history.runs.empty()) {
    out["lag_history_note"] = "the job has not committed yet";
  }
  return out;
}

}  // namespace lakesync::ui
