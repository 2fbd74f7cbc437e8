// lakesync scan: read a table (with deletes applied) as a text table, JSON Lines, CSV or Parquet.
#include <arrow/io/file.h>
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.h"
#include "lakesync/formats/tabular/tabular.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/spec_syntax.h"
#include "lakesync/table/scan.h"

namespace lakesync::cli {
namespace {

// Standard output as an Arrow stream. It counts its own position: stdout may be a pipe, where the
// lseek() behind FileOutputStream::Tell fails (and the Parquet writer asks for the position).
class StdoutStream : public arrow::io::OutputStream {
 public:
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }
  bool closed() const override { return closed_; }
  Result<int64_t> Tell() const override { return position_; }
  Status Write(const void* data, int64_t nbytes) override {
    const auto* p = static_cast<const char*>(data);
    while (nbytes > 0) {
      const ssize_t n = ::write(STDOUT_FILENO, p, static_cast<size_t>(nbytes));
      if (n < 0) {
        if (errno == EINTR) continue;
        return IOError("writing to standard output: {}", std::strerror(errno));
      }
      p += n;
      nbytes -= n;
      position_ += n;
    }
    return Status::OK();
  }

 private:
  int64_t position_ = 0;
  bool closed_ = false;
};

Result<std::shared_ptr<arrow::io::OutputStream>> Stdout() { return std::make_shared<StdoutStream>(); }

}  // namespace

void RegisterScanCommand(Cli& cli) {
  struct Args {
    std::string table, filter, select, format = "table", output, as_of, ref = "main";
    std::optional<int64_t> limit, snapshot_id;
    bool stats = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = cli.app.add_subcommand(
      "scan", "Read a table's rows (deletes applied) as a text table, JSON Lines, CSV or Parquet");
  cmd->add_option("--table,-t", a->table, "NAMESPACE.TABLE")->required();
  cmd->add_option("--filter", a->filter,
                  "row filter, SQL-like: \"id > 5 AND region = 'eu'\", IN, BETWEEN, IS NULL, LIKE 'prefix%'");
  cmd->add_option("--select", a->select, "comma-separated columns to output (default: all)");
  cmd->add_option("--limit", a->limit, "stop after N rows")->check(CLI::NonNegativeNumber);
  auto* snap = cmd->add_option("--snapshot-id", a->snapshot_id, "read this snapshot (time travel)");
  auto* asof = cmd->add_option("--as-of", a->as_of, "read the snapshot current at this ISO-8601 time");
  cmd->add_option("--ref", a->ref, "branch or tag to read (default main)");
  snap->excludes(asof);
  cmd->add_option("--format", a->format,
                  "table (default), jsonl (one JSON object per row: timestamps ISO-8601 UTC, decimals as strings, "
                  "binary as base64), csv or parquet")
      ->check(CLI::IsMember({"table", "jsonl", "csv", "parquet"}));
  cmd->add_option("--output,-o", a->output, "write to this file instead of standard output");
  cmd->add_flag("--stats", a->stats, "print planning statistics to standard error");
  AddCatalogOption(*cmd, cli.global);
  cmd->callback([&cli, a] {
    cli.action = [&cli, a]() -> Status {
      ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a->table));
      ARROW_ASSIGN_OR_RAISE(auto format, tabular::ParseFormat(a->format));
      if (format == tabular::Format::kParquet && a->output.empty() && isatty(STDOUT_FILENO)) {
        return InvalidArgument("--format parquet writes binary data: give --output FILE or redirect stdout");
      }
      ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(cli.global));
      ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(catalog, id));
      table::ScanOptions options;
      options.filter = a->filter;
      options.snapshot_id = a->snapshot_id;
      options.ref = a->ref;
      options.limit = a->limit;
      if (!a->as_of.empty()) {
        ARROW_ASSIGN_OR_RAISE(int64_t micros, iceberg::ParseTimestamp(a->as_of, false));
        options.as_of_timestamp_ms = micros / 1000;
      }
      if (!a->select.empty()) {
        for (auto& c : iceberg::SplitTopLevelCommas(a->select)) options.select.push_back(c);
      }
      ARROW_ASSIGN_OR_RAISE(auto scan, table::TableScan::Make(t, options));
      ARROW_ASSIGN_OR_RAISE(auto reader, scan->Open());
      std::shared_ptr<arrow::io::OutputStream> out;
      if (a->output.empty()) {
        ARROW_ASSIGN_OR_RAISE(out, Stdout());
      } else {
        ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(a->output));
        ARROW_ASSIGN_OR_RAISE(out, t->io()->OpenOutput(location));
      }
      ARROW_ASSIGN_OR_RAISE(auto writer, tabular::MakeRecordWriter(format, scan->output_schema(), out));
      int64_t rows = 0;
      while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
        if (!batch) break;
        rows += batch->num_rows();
        ARROW_RETURN_NOT_OK(writer->Write(*batch));
      }
      ARROW_RETURN_NOT_OK(writer->Close());
      if (!a->output.empty()) ARROW_RETURN_NOT_OK(out->Close());
      if (a->stats) {
        const auto& s = scan->stats();
        fmt::print(stderr,
                   "snapshot {}: {} rows; manifests {} ({} skipped); data files {} ({} skipped); delete files {}\n",
                   scan->snapshot() ? std::to_string(scan->snapshot()->snapshot_id) : "none", rows, s.manifests,
                   s.manifests_skipped, s.data_files, s.data_files_skipped, s.delete_files);
      }
      return Status::OK();
    };
  });
}

}  // namespace lakesync::cli
