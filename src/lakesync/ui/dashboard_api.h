// The dashboard's JSON API (docs/ui.md, "JSON API"), as plain C++ calls: the HTTP layer
// (ui_server.h) only routes to these, and the pages are one client of it. Everything here reads; no
// call writes to a table, a catalog or a job's files.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "lakesync/catalog/catalog.h"
#include "lakesync/engine/job_runner.h"
#include "lakesync/ui/table_health.h"

namespace lakesync::ui {

// Opens a job file as `lakesync run` would (its catalog, its source), for its status and its source's
// commits. The CLI supplies it (tools/lakesync/cmd_ui.cc), so a job is opened one way everywhere.
using JobOpener = std::function<Result<std::unique_ptr<engine::JobRunner>>(const std::string& path)>;

// Which namespaces a caller may see (an auth grant's scope); empty: all.
using NamespaceFilter = std::function<bool(const catalog::Namespace&)>;

struct DashboardOptions {
  std::shared_ptr<catalog::Catalog> catalog;
  // A folder of job files (*.yaml, *.yml, *.json); empty: none. With them the job pages show each job's
  // status (lag against its source, last run, last error) and the lag over time.
  std::string jobs_dir;
  JobOpener open_job;
  TableHealthOptions health;
  size_t max_runs = 500;              // runs per sink shown (the newest)
  size_t max_source_commits = 10000;  // source commits read for one lag history
};

class Dashboard {
 public:
  // Errors: InvalidArgument without a catalog, or with a jobs folder but no opener; NotFound for a
  // jobs folder that does not exist.
  static Result<std::unique_ptr<Dashboard>> Make(DashboardOptions options);

  // GET /api/v1/overview: the catalog's namespaces and tables (TableOverview rows), and totals.
  Result<nlohmann::json> Overview(const NamespaceFilter& visible = {});
  // GET /api/v1/table?name=NS.TABLE: TableHealth. Errors: NotFound for a table that does not exist or
  // that `visible` hides.
  Result<nlohmann::json> Table(const std::string& name, const NamespaceFilter& visible = {});
  // GET /api/v1/jobs: every sink id with commits in the catalog, and every job file of the jobs folder.
  Result<nlohmann::json> Jobs(const NamespaceFilter& visible = {});
  // GET /api/v1/job?sink_id=ID: the sink's runs, its job file's status and its lag over time.
  // Errors: NotFound for a sink id with neither commits nor a job file.
  Result<nlohmann::json> Job(const std::string& sink_id, const NamespaceFilter& visible = {});

  const DashboardOptions& options() const { return options_; }

 private:
  explicit Dashboard(DashboardOptions options) : options_(std::move(options)) {}
  // The visible tables; those that could not be loaded (a damaged metadata file, say) go to `failed`
  // with their error instead of failing the whole page.
  Result<std::vector<std::shared_ptr<table::Table>>> LoadTables(
      const NamespaceFilter& visible, std::vector<std::pair<std::string, Status>>* failed = nullptr);
  struct JobFile;
  Result<std::vector<JobFile>> ScanJobFiles();

  DashboardOptions options_;
};

}  // namespace lakesync::ui
