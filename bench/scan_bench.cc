// scan_bench: times one full-table read and prints what it measured as one JSON line per repetition.
//
// Modes (--mode):
//   lakesync  table::TableScan (plan, deletes applied, all columns), every batch consumed.
//   reader    lakesync's Parquet reader (parquet_io::ParquetDataReader, the layer under TableScan) on
//             the planned data files, without deletes: separates the reader's own cost from planning and
//             delete application.
//   arrow     the floor: the same data files read with plain parquet::arrow::FileReader (all columns,
//             same batch size and threading, one batch reader per row group), no delete work at all;
//             --whole-file reads each file with one batch reader instead; --verify-checksums checks
//             every page's CRC32 as lakesync's reader does (parquet_io::ParquetReaderProperties).
//   files     prints the plan (data files, their sizes and record counts, attached delete files) and
//             times nothing.
//
// Each measurement reports wall time, CPU time (user + system of the whole process, so every Arrow
// thread counts), rows, and the process's peak RSS so far. bench/scan_bench.py starts one process per
// measurement so the peak RSS belongs to that one read; --repeat exists for profiling.
#include <arrow/array.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <fmt/format.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/properties.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/catalog/catalog_config.h"
#include "lakesync/common/executor.h"
#include "lakesync/formats/parquet/parquet_data_reader.h"
#include "lakesync/table/scan.h"
#include "lakesync/table/table.h"

// Under `valgrind --tool=callgrind --collect-atstart=no`, only the timed region is counted, which gives
// an instruction count that does not depend on what else the machine is running. A no-op otherwise.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define LS_BENCH_TOGGLE_COLLECT() CALLGRIND_TOGGLE_COLLECT
#else
#define LS_BENCH_TOGGLE_COLLECT() \
  do {                            \
  } while (0)
#endif

namespace lakesync::bench {
namespace {

struct Args {
  std::string mode = "lakesync";
  std::string table;
  std::string catalog_config;  // empty: the embedded default ($LAKESYNC_WAREHOUSE)
  std::optional<int64_t> snapshot_id;
  int64_t batch_rows = 64 * 1024;
  bool no_threads = false;
  std::string checksum_column;  // when set, also sums this int64 column (validation runs, not timed ones)
  int repeat = 1;
  bool whole_file = false;  // arrow mode: one batch reader over all row groups
  bool verify_checksums = false;  // arrow mode: verify page CRCs, as lakesync's reader always does
  int threads = 0;          // the engine's executor (and Arrow's CPU pool) size; 0: the default
};

struct Clock {
  std::chrono::steady_clock::time_point wall;
  double user = 0;
  double system = 0;
  int64_t minor_faults = 0;

  static Clock Now() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
    return Clock{std::chrono::steady_clock::now(), seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_minflt};
  }
  double WallSince(const Clock& start) const { return std::chrono::duration<double>(wall - start.wall).count(); }
  double CpuSince(const Clock& start) const { return user + system - start.user - start.system; }
  // CPU split and page faults: fresh memory costs the kernel time zeroing pages.
  void Report(const Clock& start, nlohmann::json& out) const {
    out["wall_s"] = WallSince(start);
    out["cpu_s"] = CpuSince(start);
    out["user_s"] = user - start.user;
    out["system_s"] = system - start.system;
    out["minor_faults"] = minor_faults - start.minor_faults;
  }
};

// The timed region: Start() and Stop() read the clocks and switch callgrind's collection on and off.
Clock Start() {
  LS_BENCH_TOGGLE_COLLECT();
  return Clock::Now();
}
Clock Stop() {
  Clock end = Clock::Now();
  LS_BENCH_TOGGLE_COLLECT();
  return end;
}

// The peak resident set of this process image, from /proc/self/status (VmHWM, KiB). Not getrusage's
// ru_maxrss: Linux carries that across execve, so a child of a large Python process would report the
// parent's peak.
double PeakRssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return -1;
}

// Counts rows and, when asked, sums one int64 column: what every mode does with each batch.
class Consumer {
 public:
  explicit Consumer(std::string checksum_column) : checksum_column_(std::move(checksum_column)) {}

  Status Consume(const arrow::RecordBatch& batch) {
    rows_ += batch.num_rows();
    ++batches_;
    if (checksum_column_.empty()) return Status::OK();
    auto column = batch.GetColumnByName(checksum_column_);
    if (!column) return InvalidArgument("checksum column '{}' is not in the batches", checksum_column_);
    if (column->type_id() != arrow::Type::INT64) {
      return InvalidArgument("checksum column '{}' is {}, not int64", checksum_column_, column->type()->ToString());
    }
    const auto& values = static_cast<const arrow::Int64Array&>(*column);
    for (int64_t i = 0; i < values.length(); ++i) {
      if (values.IsValid(i)) sum_ += static_cast<uint64_t>(values.Value(i));
    }
    return Status::OK();
  }

  void Report(nlohmann::json& out) const {
    out["rows"] = rows_;
    out["batches"] = batches_;
    // Wrapping unsigned arithmetic, reported as signed: equal inputs give equal sums.
    if (!checksum_column_.empty()) out["checksum"] = static_cast<int64_t>(sum_);
  }

 private:
  std::string checksum_column_;
  int64_t rows_ = 0;
  int64_t batches_ = 0;
  uint64_t sum_ = 0;
};

Result<std::shared_ptr<table::Table>> LoadTable(const Args& args) {
  catalog::CatalogConfig config;
  if (args.catalog_config.empty()) {
    ARROW_ASSIGN_OR_RAISE(config, catalog::DefaultCatalogConfig());
  } else {
    ARROW_ASSIGN_OR_RAISE(config, catalog::LoadCatalogConfigFile(args.catalog_config));
  }
  ARROW_ASSIGN_OR_RAISE(auto catalog, catalog::LoadCatalog(config));
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(args.table));
  return table::Table::Load(catalog, id);
}

table::ScanOptions MakeScanOptions(const Args& args) {
  table::ScanOptions options;
  options.snapshot_id = args.snapshot_id;
  options.batch_rows = args.batch_rows;
  options.use_threads = !args.no_threads;
  return options;
}

Result<std::vector<table::FileScanTask>> Plan(const std::shared_ptr<table::Table>& t, const Args& args) {
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(t, MakeScanOptions(args)));
  return scan->PlanFiles();
}

// TableScan end to end: planning (manifest list, manifests, delete attachment), then reading.
Result<nlohmann::json> RunLakesync(const std::shared_ptr<table::Table>& t, const Args& args) {
  Consumer consumer(args.checksum_column);
  const Clock start = Start();
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(t, MakeScanOptions(args)));
  ARROW_ASSIGN_OR_RAISE(auto tasks, scan->PlanFiles());
  const Clock planned = Clock::Now();
  ARROW_ASSIGN_OR_RAISE(auto reader, scan->Open());  // reuses the plan
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    ARROW_RETURN_NOT_OK(consumer.Consume(*batch));
  }
  const Clock end = Stop();
  int64_t deletes = 0;
  for (const auto& task : tasks) {
    deletes += (task.deletion_vector ? 1 : 0) + static_cast<int64_t>(task.position_deletes.size()) +
               static_cast<int64_t>(task.equality_deletes.size());
  }
  nlohmann::json out = {{"plan_wall_s", planned.WallSince(start)}, {"data_files", tasks.size()},
                        {"delete_files", deletes}};
  end.Report(start, out);
  consumer.Report(out);
  return out;
}

// lakesync's Parquet reader on the same files, no deletes (planning is done before the clock starts).
Result<nlohmann::json> RunReader(const std::shared_ptr<table::Table>& t, const Args& args) {
  ARROW_ASSIGN_OR_RAISE(auto tasks, Plan(t, args));
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(t, MakeScanOptions(args)));
  Consumer consumer(args.checksum_column);
  const Clock start = Start();
  for (const auto& task : tasks) {
    parquet_io::ParquetReadOptions options;
    options.batch_size = args.batch_rows;
    options.use_threads = !args.no_threads;
    ARROW_ASSIGN_OR_RAISE(auto input, t->io()->OpenInput(task.file->file_path, task.file->file_size_in_bytes));
    ARROW_ASSIGN_OR_RAISE(auto reader, parquet_io::ParquetDataReader::Open(std::move(input), task.file->file_path,
                                                                           scan->schema(), options));
    while (true) {
      ARROW_ASSIGN_OR_RAISE(auto next, reader->Next());
      if (!next) break;
      ARROW_RETURN_NOT_OK(consumer.Consume(*next->batch));
    }
  }
  const Clock end = Stop();
  nlohmann::json out = {{"data_files", tasks.size()}};
  end.Report(start, out);
  consumer.Report(out);
  return out;
}

// The floor: plain Arrow/Parquet C++ over the planned data files (the plan is made before the clock
// starts; the floor does no Iceberg work at all).
Result<nlohmann::json> RunArrow(const std::shared_ptr<table::Table>& t, const Args& args) {
  ARROW_ASSIGN_OR_RAISE(auto tasks, Plan(t, args));
  std::vector<std::string> paths;
  for (const auto& task : tasks) paths.push_back(task.file->file_path);
  Consumer consumer(args.checksum_column);
  const Clock start = Start();
  for (const auto& path : paths) {
    std::string local;
    ARROW_ASSIGN_OR_RAISE(auto fs, arrow::fs::FileSystemFromUriOrPath(path, &local));
    ARROW_ASSIGN_OR_RAISE(auto input, fs->OpenInputFile(local));
    parquet::ArrowReaderProperties properties(!args.no_threads);
    properties.set_batch_size(args.batch_rows);
    std::unique_ptr<parquet::arrow::FileReader> reader;
    try {
      parquet::ReaderProperties file_properties(arrow::default_memory_pool());
      if (args.verify_checksums) file_properties.set_page_checksum_verification(true);
      ARROW_ASSIGN_OR_RAISE(reader, parquet::arrow::FileReader::Make(
                                        arrow::default_memory_pool(),
                                        parquet::ParquetFileReader::Open(input, file_properties), properties));
      // One batch reader per row group (what lakesync's reader does; the faster way here, so the
      // floor), or with --whole-file one over all row groups, which pre-buffers every column chunk of
      // the file at once.
      std::vector<std::vector<int>> groups;
      if (!args.whole_file) {
        for (int rg = 0; rg < reader->num_row_groups(); ++rg) groups.push_back({rg});
      } else {
        std::vector<int> all(static_cast<size_t>(reader->num_row_groups()));
        for (int rg = 0; rg < reader->num_row_groups(); ++rg) all[static_cast<size_t>(rg)] = rg;
        groups.push_back(std::move(all));
      }
      for (const auto& row_groups : groups) {
        ARROW_ASSIGN_OR_RAISE(auto batches, reader->GetRecordBatchReader(row_groups));
        while (true) {
          std::shared_ptr<arrow::RecordBatch> batch;
          ARROW_RETURN_NOT_OK(batches->ReadNext(&batch));
          if (!batch) break;
          ARROW_RETURN_NOT_OK(consumer.Consume(*batch));
        }
      }
    } catch (const std::exception& e) {
      return Corrupt("reading {}: {}", path, e.what());
    }
  }
  const Clock end = Stop();
  nlohmann::json out = {{"data_files", paths.size()}};
  end.Report(start, out);
  consumer.Report(out);
  return out;
}

std::string Local(const std::string& location) {
  std::string local;
  auto fs = arrow::fs::FileSystemFromUriOrPath(location, &local);
  return fs.ok() ? local : location;
}

Result<nlohmann::json> RunFiles(const std::shared_ptr<table::Table>& t, const Args& args) {
  ARROW_ASSIGN_OR_RAISE(auto tasks, Plan(t, args));
  nlohmann::json files = nlohmann::json::array();
  for (const auto& task : tasks) {
    nlohmann::json f = {{"path", task.file->file_path}, {"local_path", Local(task.file->file_path)},
                        {"file_size_in_bytes", task.file->file_size_in_bytes},
                        {"record_count", task.file->record_count},
                        {"deletion_vector", task.deletion_vector ? task.deletion_vector->file_path : ""},
                        {"deleted_rows", task.deletion_vector ? task.deletion_vector->record_count : 0},
                        {"position_delete_files", task.position_deletes.size()},
                        {"equality_delete_files", task.equality_deletes.size()}};
    files.push_back(std::move(f));
  }
  ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(t, MakeScanOptions(args)));
  return nlohmann::json{{"snapshot_id", scan->snapshot() ? scan->snapshot()->snapshot_id : -1},
                        {"metadata_location", t->metadata_location()},
                        {"files", std::move(files)}};
}

Status Main(const Args& args) {
  // Sizes Arrow's CPU pool for every mode, so that the floor runs on as many threads as lakesync.
  ARROW_RETURN_NOT_OK(ConfigureThreads(args.threads > 0 ? std::optional<int>(args.threads) : std::nullopt));
  const Clock start = Clock::Now();
  ARROW_ASSIGN_OR_RAISE(auto t, LoadTable(args));
  const double load_s = Clock::Now().WallSince(start);
  if (args.mode == "files") {
    ARROW_ASSIGN_OR_RAISE(auto out, RunFiles(t, args));
    fmt::print("{}\n", out.dump());
    return Status::OK();
  }
  for (int i = 0; i < args.repeat; ++i) {
    Result<nlohmann::json> out;
    if (args.mode == "lakesync") {
      out = RunLakesync(t, args);
    } else if (args.mode == "reader") {
      out = RunReader(t, args);
    } else if (args.mode == "arrow") {
      out = RunArrow(t, args);
    } else {
      return InvalidArgument("unknown --mode '{}': expected lakesync, reader, arrow or files", args.mode);
    }
    ARROW_RETURN_NOT_OK(out.status());
    nlohmann::json line = std::move(out).ValueUnsafe();
    line["mode"] = args.mode;
    line["table"] = args.table;
    line["snapshot_id"] = args.snapshot_id ? *args.snapshot_id : -1;
    line["batch_rows"] = args.batch_rows;
    line["use_threads"] = !args.no_threads;
    line["table_load_wall_s"] = load_s;
    line["peak_rss_mib"] = PeakRssMiB();
    fmt::print("{}\n", line.dump());
    std::fflush(stdout);
  }
  return Status::OK();
}

}  // namespace
}  // namespace lakesync::bench

int main(int argc, char** argv) {
  lakesync::bench::Args args;
  CLI::App app{"Times a full read of an Iceberg table: lakesync's TableScan, its Parquet reader, or plain Arrow"};
  app.add_option("--mode", args.mode, "lakesync | reader | arrow | files")
      ->check(CLI::IsMember({"lakesync", "reader", "arrow", "files"}));
  app.add_option("--table,-t", args.table, "NAMESPACE.TABLE")->required();
  app.add_option("--catalog-config", args.catalog_config, "catalog YAML (default: the embedded catalog)");
  app.add_option("--snapshot-id", args.snapshot_id, "read this snapshot (default: current)");
  app.add_option("--batch-rows", args.batch_rows, "rows per batch")->check(CLI::PositiveNumber);
  app.add_flag("--no-threads", args.no_threads, "decode columns on one thread");
  app.add_option("--checksum-column", args.checksum_column, "also sum this int64 column (for validation runs)");
  app.add_flag("--whole-file", args.whole_file,
               "arrow mode: one batch reader over all row groups instead of one per row group");
  app.add_flag("--verify-checksums", args.verify_checksums,
               "arrow mode: verify page checksums (CRC32) like lakesync's reader (docs/reliability.md)");
  app.add_option("--repeat", args.repeat, "measurements in this process")->check(CLI::PositiveNumber);
  app.add_option("--threads", args.threads, "threads of the engine's executor and Arrow's CPU pool (default: cores)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  lakesync::Status st = lakesync::bench::Main(args);
  if (!st.ok()) {
    fmt::print(stderr, "scan_bench: error: {}\n", st.ToString());
    return 1;
  }
  return 0;
}
