// lakesync changes --source iceberg: an Iceberg table's changelog (src/lakesync/iceberg/changelog).
// Bounds have Beam's meaning (shared/specs/beam-compat.md section 2), as in job configurations:
// --start-snapshot-id and --end-snapshot-id are inclusive (Spark's start-snapshot-id is exclusive),
// timestamps too, and `latest` starts at the current snapshot. See docs/changelog.md.
#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>
#include <fmt/format.h>

#include <limits>

#include <unistd.h>

#include <atomic>
#include <csignal>

#include <fcntl.h>

#include "changes_args.h"
#include "lakesync/iceberg/changelog/changelog_source.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/io/file_io.h"
#include "lakesync/io/location.h"
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
// completely written, like the sink's lakesync.source-position.<sink_id>. It is read and written
// through the table's FileIO (a plain path is a local file), so both sides follow one location rule.
Result<std::optional<int64_t>> ReadPositionFile(const io::FileIO& file_io, const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(path));
  auto content = file_io.ReadAll(location);
  if (!content.ok() && KindOf(content.status()) == ErrorKind::kNotFound) return std::optional<int64_t>();
  ARROW_RETURN_NOT_OK(content.status());
  const std::string text = content->substr(0, content->find('\n'));
  const auto colon = text.find(':');
  const std::string ordinal = text.substr(0, colon);
  if (ordinal.empty() || ordinal.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--position-file {}: expected '<sequence number>:<snapshot id>', got '{}'", path, text);
  }
  return std::optional<int64_t>(std::stoll(ordinal));
}

// Replaced through FileIO::WriteAll, the project's one rule for replacing a file: locally a synced
// temporary file renamed over the old one, then the directory synced, so a crash or power loss
// leaves the old position or the new one, never a torn or empty file.
Status WritePositionFile(const changelog::ChangelogSource& source, const std::string& path,
                         const iceberg::Snapshot& snapshot) {
  ARROW_ASSIGN_OR_RAISE(auto location, io::NormalizeLocation(path));
  return source.table()->io()->WriteAll(location,
                                        fmt::format("{}:{}\n", snapshot.sequence_number, snapshot.snapshot_id));
}

// `parquet_output`: the rows go to the CLI's Parquet writer, which takes _change_type as codes
// (ChangelogOptions::change_type_as_dictionary); every other consumer gets the names.
Result<std::unique_ptr<changelog::ChangelogSource>> OpenSource(const ChangesArgs& a, const GlobalOptions& global,
                                                               bool parquet_output = false) {
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
  o.change_type_as_dictionary = parquet_output;
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
  ARROW_ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(a.table));
  ARROW_ASSIGN_OR_RAISE(auto catalog, OpenCatalog(global));
  ARROW_ASSIGN_OR_RAISE(auto t, table::Table::Load(catalog, id));
  if (!a.position_file.empty()) {
    ARROW_ASSIGN_OR_RAISE(o.after_sequence_number, ReadPositionFile(*t->io(), a.position_file));
  }
  return changelog::ChangelogSource::Make(t, std::move(o));
}

// --follow: JSON Lines, each batch written as soon as it is read, and the position file rewritten
// once a snapshot's rows are all written (ChangelogSource::Follow's on_snapshot_read), until
// SIGINT/SIGTERM, --limit rows or the end bound. A signal ends the stream between snapshots: the
// snapshot being written is finished and recorded first.
Status Follow(const ChangesArgs& a, changelog::ChangelogSource& source) {
  ARROW_ASSIGN_OR_RAISE(auto format, tabular::ParseFormat(a.out.format));
  if (format != tabular::Format::kJsonl) {
    return InvalidArgument("--follow writes JSON Lines (--format jsonl), not {}", a.out.format);
  }
  // Each batch is flushed to an unbuffered stream, so a snapshot's rows are written before its
  // position is recorded; a resumed run appends to what the last one wrote.
  std::shared_ptr<arrow::io::OutputStream> out = DescriptorOutput(STDOUT_FILENO, "standard output", false);
  if (!a.out.output.empty()) {
    ARROW_ASSIGN_OR_RAISE(out, OpenDescriptorOutput(a.out.output, a.out.output, O_CREAT | O_APPEND));
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(a.poll_interval_seconds * 1000));
  int64_t left = a.limit.value_or(std::numeric_limits<int64_t>::max());
  changelog::ChangelogSource::SnapshotReadCallback record_position;
  if (!a.position_file.empty()) {
    record_position = [&](const changelog::PendingSnapshot& p) {
      return WritePositionFile(source, a.position_file, *p.snapshot);
    };
  }
  Status st = [&]() -> Status {
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          source.Follow(interval, [&] { return g_stop.load() || left <= 0; }, record_position));
    ARROW_ASSIGN_OR_RAISE(auto writer, tabular::MakeRecordWriter(format, reader->schema(), out));
    // --limit stops here, mid-snapshot if need be (it excludes --position-file, so nothing is recorded).
    while (left > 0) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
      if (!batch) break;
      if (batch->num_rows() > left) batch = batch->Slice(0, left);
      left -= batch->num_rows();
      ARROW_RETURN_NOT_OK(writer->Write(*batch));
      ARROW_RETURN_NOT_OK(writer->Flush());
    }
    return writer->Close();
  }();
  const Status closed = out->Close();
  return st.ok() ? closed : st;
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
  ARROW_ASSIGN_OR_RAISE(const auto format, OutputFormat(args.out));
  if (args.limit && !args.position_file.empty()) {
    return InvalidArgument("--limit cannot be combined with --position-file: the file would record a snapshot "
                           "whose rows were not all written");
  }
  ARROW_ASSIGN_OR_RAISE(auto source,
                        OpenSource(args, global, !args.follow && format == tabular::Format::kParquet));
  if (args.follow) return Follow(args, *source);
  ARROW_ASSIGN_OR_RAISE(auto pending, source->Pending());
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::RecordBatchReader> reader, source->ReadAll());
  if (args.limit) reader = LimitRows(std::move(reader), *args.limit);
  ARROW_RETURN_NOT_OK(WriteRows(args.out, *reader, source->table()->io().get()).status());
  if (!args.position_file.empty() && !pending.empty()) {
    ARROW_RETURN_NOT_OK(WritePositionFile(*source, args.position_file, *pending.back().snapshot));
  }
  return Status::OK();
}

}  // namespace lakesync::cli
