// lakesync changes --source iceberg: an Iceberg table's changelog (src/lakesync/iceberg/changelog).
// Bounds have Beam's meaning (shared/specs/beam-compat.md section 2), as in job configurations:
// --start-snapshot-id and --end-snapshot-id are inclusive (Spark's start-snapshot-id is exclusive),
// timestamps too, and `latest` starts at the current snapshot. See docs/changelog.md.
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <limits>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>

#include "changes_args.h"
#include "lakesync/iceberg/changelog/changelog_source.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/table/table.h"

namespace lakesync::cli {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

Result<int64_t> ParseTimestampFlag(const std::string& flag, const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    try {
      return static_cast<int64_t>(std::stoll(text));
    } catch (...) {
    }
  }
  auto micros = iceberg::ParseTimestamp(text, false);
  if (!micros.ok()) {
    return InvalidArgument("{} '{}': expected an ISO-8601 timestamp or epoch milliseconds", flag, text);
  }
  return *micros / 1000;
}

// The position file holds "<sequence number>:<snapshot id>" of the last snapshot whose changes were
// completely written, like the sink's lakesync.source-position.<sink_id>.
Result<std::optional<int64_t>> ReadPositionFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::optional<int64_t>();
  std::string text;
  std::getline(in, text);
  const auto colon = text.find(':');
  const std::string ordinal = text.substr(0, colon);
  if (ordinal.empty() || ordinal.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--position-file {}: expected '<sequence number>:<snapshot id>', got '{}'", path, text);
  }
  return std::optional<int64_t>(std::stoll(ordinal));
}

// Written to a temporary file and renamed, so a crash leaves the old or the new position.
Status WritePositionFile(const std::string& path, int64_t sequence_number, int64_t snapshot_id) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << sequence_number << ':' << snapshot_id << '\n';
    out.flush();
    if (!out) return IOError("writing --position-file {}", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return IOError("renaming {} to {}: {}", tmp, path, std::strerror(errno));
  }
  return Status::OK();
}

Status WriteAll(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IOError("writing output: {}", std::strerror(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::OK();
}

Result<std::unique_ptr<changelog::ChangelogSource>> OpenSource(const ChangesArgs& a, const GlobalOptions& global) {
  if (a.start_version) return InvalidArgument("--start-version is a Delta flag; for Iceberg use --start-snapshot-id");
  if (a.end_version) return InvalidArgument("--end-version is a Delta flag; for Iceberg use --end-snapshot-id");
  if (a.start_snapshot_id && !a.start_timestamp.empty()) {
    return InvalidArgument("give at most one of --start-snapshot-id and --start-timestamp");
  }
  if (a.end_snapshot_id && !a.end_timestamp.empty()) {
    return InvalidArgument("give at most one of --end-snapshot-id and --end-timestamp");
  }
  if (!a.starting_strategy.empty() && (a.start_snapshot_id || !a.start_timestamp.empty())) {
    return InvalidArgument("--starting-strategy cannot be combined with --start-snapshot-id or --start-timestamp");
  }
  changelog::ChangelogOptions o;
  o.start_snapshot_id = a.start_snapshot_id;
  o.start_inclusive = true;  // Beam's from_snapshot; `latest` includes the current snapshot
  o.end_snapshot_id = a.end_snapshot_id;
  if (!a.start_timestamp.empty()) {
    ARROW_ASSIGN_OR_RAISE(o.start_timestamp_ms, ParseTimestampFlag("--start-timestamp", a.start_timestamp));
  }
  if (!a.end_timestamp.empty()) {
    ARROW_ASSIGN_OR_RAISE(o.end_timestamp_ms, ParseTimestampFlag("--end-timestamp", a.end_timestamp));
  }
  if (o.start_timestamp_ms && o.end_timestamp_ms && *o.start_timestamp_ms > *o.end_timestamp_ms) {
    return InvalidArgument("--start-timestamp {} is after --end-timestamp {}", a.start_timestamp, a.end_timestamp);
  }
  if (a.starting_strategy == "latest") o.starting_strategy = changelog::StartingStrategy::kLatest;
  if (!a.columns.empty()) {
    ARROW_RETURN_NOT_OK(changelog::CheckMetadataColumns("--columns", a.columns));
    o.metadata_columns = a.columns;
  }
  if (!a.position_file.empty()) {
    ARROW_ASSIGN_OR_RAISE(o.after_sequence_number, ReadPositionFile(a.position_file));
  }
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a.table));
  ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(global));
  ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(catalog, id));
  return changelog::ChangelogSource::Make(t, std::move(o));
}

// --follow: JSON Lines, each snapshot's rows written (and the position file updated) as soon as the
// snapshot is read, until SIGINT/SIGTERM or the end bound.
Status Follow(const ChangesArgs& a, changelog::ChangelogSource& source) {
  ARROW_ASSIGN_OR_RAISE(auto format, tabular::ParseFormat(a.out.format));
  if (format != tabular::Format::kJsonl) {
    return InvalidArgument("--follow writes JSON Lines (--format jsonl), not {}", a.out.format);
  }
  int fd = STDOUT_FILENO;
  if (!a.out.output.empty()) {
    fd = ::open(a.out.output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) return IOError("opening --output {}: {}", a.out.output, std::strerror(errno));
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(a.poll_interval_seconds * 1000));
  bool first = true;
  int64_t left = a.limit.value_or(std::numeric_limits<int64_t>::max());
  while (!g_stop && left > 0) {
    if (!first) {
      auto until = std::chrono::steady_clock::now() + interval;
      while (!g_stop && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (g_stop) break;
      ARROW_RETURN_NOT_OK(source.Refresh());
    }
    first = false;
    ARROW_ASSIGN_OR_RAISE(auto pending, source.Pending());
    for (const auto& p : pending) {
      if (g_stop || left <= 0) break;
      ARROW_ASSIGN_OR_RAISE(auto reader, source.Read(p));
      while (left > 0) {
        std::shared_ptr<arrow::RecordBatch> batch;
        ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
        if (!batch) break;
        if (batch->num_rows() > left) batch = batch->Slice(0, left);
        left -= batch->num_rows();
        std::string text;
        for (int64_t r = 0; r < batch->num_rows(); ++r) {
          ARROW_ASSIGN_OR_RAISE(auto line, tabular::RowToJson(*batch, r));
          text += line;
          text.push_back('\n');
        }
        ARROW_RETURN_NOT_OK(WriteAll(fd, text));
      }
      if (!a.position_file.empty()) {
        ARROW_RETURN_NOT_OK(WritePositionFile(a.position_file, p.snapshot->sequence_number, p.snapshot->snapshot_id));
      }
    }
    if (source.reached_end()) break;
  }
  if (fd != STDOUT_FILENO) ::close(fd);
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenIcebergChanges(const ChangesArgs& args,
                                                                     const GlobalOptions& global) {
  ARROW_ASSIGN_OR_RAISE(auto source, OpenSource(args, global));
  // The reader borrows the source: keep it alive with the reader.
  struct Owning : arrow::RecordBatchReader {
    std::unique_ptr<changelog::ChangelogSource> source;
    std::shared_ptr<arrow::RecordBatchReader> inner;
    std::shared_ptr<arrow::Schema> schema() const override { return inner->schema(); }
    arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override { return inner->ReadNext(out); }
  };
  auto owning = std::make_shared<Owning>();
  ARROW_ASSIGN_OR_RAISE(owning->inner, source->ReadAll());
  owning->source = std::move(source);
  return owning;
}

Status RunIcebergChanges(const ChangesArgs& args, const GlobalOptions& global) {
  ARROW_RETURN_NOT_OK(OutputFormat(args.out).status());
  if (args.limit && !args.position_file.empty()) {
    return InvalidArgument("--limit cannot be combined with --position-file: the file would record a snapshot "
                           "whose rows were not all written");
  }
  ARROW_ASSIGN_OR_RAISE(auto source, OpenSource(args, global));
  if (args.follow) return Follow(args, *source);
  ARROW_ASSIGN_OR_RAISE(auto pending, source->Pending());
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::RecordBatchReader> reader, source->ReadAll());
  if (args.limit) reader = LimitRows(std::move(reader), *args.limit);
  ARROW_RETURN_NOT_OK(WriteRows(args.out, *reader, source->table()->io().get()).status());
  if (!args.position_file.empty() && !pending.empty()) {
    const auto& last = pending.back().snapshot;
    ARROW_RETURN_NOT_OK(WritePositionFile(args.position_file, last->sequence_number, last->snapshot_id));
  }
  return Status::OK();
}

}  // namespace lakesync::cli
