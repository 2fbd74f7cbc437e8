#include "lakesync/plan/external_sort.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <filesystem>

#include "lakesync/common/arrow_compute.h"
#include "lakesync/plan/spill_store_internal.h"

namespace lakesync::plan {
namespace {

namespace cp = arrow::compute;
using Emit = std::function<Status(const std::shared_ptr<arrow::RecordBatch>&)>;

Result<std::shared_ptr<arrow::RecordBatch>> Concatenate(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                                        const std::shared_ptr<arrow::Schema>& schema) {
  if (batches.empty()) return arrow::RecordBatch::MakeEmpty(schema);
  if (batches.size() == 1) return batches.front();
  return arrow::ConcatenateRecordBatches(batches);
}

Result<std::shared_ptr<arrow::UInt64Array>> SortIndicesOf(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                          const std::vector<cp::SortKey>& keys) {
  ARROW_ASSIGN_OR_RAISE(auto indices, cp::SortIndices(arrow::Datum(batch), cp::SortOptions(keys)));
  return std::static_pointer_cast<arrow::UInt64Array>(indices);
}

Result<std::shared_ptr<arrow::RecordBatch>> TakeRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                     const std::shared_ptr<arrow::Array>& indices) {
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(arrow::Datum(batch), arrow::Datum(indices)));
  return taken.record_batch();
}

// Emits `batch` in slices of at most `rows` rows.
Status EmitSliced(const std::shared_ptr<arrow::RecordBatch>& batch, int64_t rows, const Emit& emit) {
  for (int64_t start = 0; start < batch->num_rows(); start += rows) {
    ARROW_RETURN_NOT_OK(emit(batch->Slice(start, std::min(rows, batch->num_rows() - start))));
  }
  return Status::OK();
}

}  // namespace

ExternalSorter::ExternalSorter(std::shared_ptr<arrow::Schema> schema, ExternalSortOptions options)
    : schema_(std::move(schema)), options_(std::move(options)) {}

ExternalSorter::~ExternalSorter() = default;  // the spill directory removes its files

std::string ExternalSorter::spill_path() const { return directory_ ? directory_->path() : std::string(); }

Result<std::unique_ptr<ExternalSorter>> ExternalSorter::Make(std::shared_ptr<arrow::Schema> schema,
                                                             ExternalSortOptions options) {
  if (!schema) return InvalidArgument("an external sort needs a schema");
  if (options.keys.empty()) return InvalidArgument("an external sort needs at least one sort key");
  for (const auto& key : options.keys) {
    const auto found = key.target.FindAll(*schema);
    if (found.size() != 1) return InvalidArgument("sort key {} is not one column of {}", key.target.ToString(), schema->ToString());
  }
  if (options.memory_limit_bytes < 1) return InvalidArgument("the sort memory limit must be positive");
  if (options.output_batch_rows < 1) return InvalidArgument("output_batch_rows must be positive");
  ARROW_RETURN_NOT_OK(EnsureArrowCompute());
  return std::unique_ptr<ExternalSorter>(new ExternalSorter(std::move(schema), std::move(options)));
}

// Rows per spilled batch (the merge's window): kMergeFanIn windows fill about half the limit.
int64_t ExternalSorter::WindowRows() const {
  const double row_bytes = rows_seen_ > 0 ? static_cast<double>(bytes_seen_) / static_cast<double>(rows_seen_) : 1.0;
  const double window_bytes = static_cast<double>(options_.memory_limit_bytes) / (2.0 * kMergeFanIn);
  return std::max<int64_t>(1, static_cast<int64_t>(window_bytes / std::max(row_bytes, 1.0)));
}

Status ExternalSorter::Add(const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (batch->num_rows() == 0) return Status::OK();
  const int64_t bytes = arrow::util::TotalBufferSize(*batch);
  buffered_.push_back(batch);
  buffered_bytes_ += bytes;
  rows_seen_ += batch->num_rows();
  bytes_seen_ += bytes;
  if (buffered_bytes_ > options_.memory_limit_bytes) return SpillBuffered();
  return Status::OK();
}

Result<std::shared_ptr<arrow::RecordBatch>> ExternalSorter::SortBuffered() {
  ARROW_ASSIGN_OR_RAISE(auto all, Concatenate(buffered_, schema_));
  buffered_.clear();
  buffered_bytes_ = 0;
  if (all->num_rows() <= 1) return all;
  ARROW_ASSIGN_OR_RAISE(auto indices, SortIndicesOf(all, options_.keys));
  return TakeRows(all, indices);
}

Result<internal::SpillBucket> ExternalSorter::WriteRun(const std::function<Status(const Emit&)>& produce) {
  if (!directory_) {
    ARROW_ASSIGN_OR_RAISE(directory_, internal::SpillDirectory::Create(options_.spill_directory, "lakesync-sort"));
  }
  internal::BucketWriter writer(directory_.get(), schema_, {}, /*count=*/1, /*seed=*/0, /*depth=*/0);
  const int64_t window = WindowRows();
  ARROW_RETURN_NOT_OK(produce([&](const std::shared_ptr<arrow::RecordBatch>& batch) {
    return EmitSliced(batch, window, [&](const std::shared_ptr<arrow::RecordBatch>& b) { return writer.Write(b); });
  }));
  ARROW_ASSIGN_OR_RAISE(auto buckets, writer.Close());
  ++runs_spilled_;
  bytes_spilled_ += writer.bytes_written();
  if (buckets.empty()) return internal::SpillBucket{};  // nothing written: an empty run
  return buckets.front();
}

Status ExternalSorter::SpillBuffered() {
  ARROW_ASSIGN_OR_RAISE(auto sorted, SortBuffered());
  ARROW_ASSIGN_OR_RAISE(auto run, WriteRun([&](const Emit& out) { return out(sorted); }));
  if (!run.path.empty()) runs_.push_back(std::move(run));
  return Status::OK();
}

Status ExternalSorter::Finish(const Emit& emit) {
  const int64_t out_rows = options_.output_batch_rows;
  if (runs_.empty()) {  // everything fits: sort in memory
    ARROW_ASSIGN_OR_RAISE(auto sorted, SortBuffered());
    return EmitSliced(sorted, out_rows, emit);
  }
  if (!buffered_.empty()) ARROW_RETURN_NOT_OK(SpillBuffered());
  // Too many runs to hold a window of each: merge them in groups into longer runs first.
  while (runs_.size() > static_cast<size_t>(kMergeFanIn)) {
    std::vector<internal::SpillBucket> next;
    for (size_t i = 0; i < runs_.size(); i += kMergeFanIn) {
      std::vector<internal::SpillBucket> group(runs_.begin() + static_cast<std::ptrdiff_t>(i),
                                               runs_.begin() + static_cast<std::ptrdiff_t>(std::min(runs_.size(), i + kMergeFanIn)));
      ARROW_ASSIGN_OR_RAISE(auto merged, WriteRun([&](const Emit& out) { return Merge(group, out); }));
      for (const auto& run : group) {
        std::error_code ec;
        std::filesystem::remove(run.path, ec);  // done with; the directory goes at the end anyway
      }
      if (!merged.path.empty()) next.push_back(std::move(merged));
    }
    runs_ = std::move(next);
  }
  return Merge(runs_, [&](const std::shared_ptr<arrow::RecordBatch>& batch) { return EmitSliced(batch, out_rows, emit); });
}

Status ExternalSorter::Merge(const std::vector<internal::SpillBucket>& runs, const Emit& emit) {
  struct Source {
    std::unique_ptr<internal::SpillFileReader> reader;  // null once the run's file is read to the end
    std::shared_ptr<arrow::RecordBatch> window;         // its rows not emitted yet (sorted)
  };
  std::vector<Source> sources(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(sources[i].reader, internal::SpillFileReader::Open(runs[i], schema_));
  }
  while (true) {
    // Refill the windows that were emitted whole.
    for (auto& s : sources) {
      while (s.reader && (!s.window || s.window->num_rows() == 0)) {
        ARROW_ASSIGN_OR_RAISE(s.window, s.reader->Next());
        if (!s.window) s.reader.reset();
      }
    }
    std::vector<Source*> active;
    std::vector<std::shared_ptr<arrow::RecordBatch>> windows, lasts;
    std::vector<int64_t> offsets;
    std::vector<Source*> bounding;  // runs with rows still on disk: they bound what may be emitted
    int64_t total = 0;
    for (auto& s : sources) {
      if (!s.window || s.window->num_rows() == 0) continue;
      active.push_back(&s);
      windows.push_back(s.window);
      offsets.push_back(total);
      total += s.window->num_rows();
      if (s.reader) {
        bounding.push_back(&s);
        lasts.push_back(s.window->Slice(s.window->num_rows() - 1, 1));
      }
    }
    if (active.empty()) return Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto all, Concatenate(windows, schema_));
    ARROW_ASSIGN_OR_RAISE(auto order, SortIndicesOf(all, options_.keys));
    if (bounding.empty()) {  // every run is read to the end: what is left is the rest, sorted
      ARROW_ASSIGN_OR_RAISE(auto rest, TakeRows(all, order));
      return emit(rest);
    }
    // The boundary: the lowest last row among the windows of runs with more rows on disk. Every row
    // still on disk sorts no earlier than it (each run is sorted), so the rows sorted up to it can go.
    ARROW_ASSIGN_OR_RAISE(auto last_rows, Concatenate(lasts, schema_));
    ARROW_ASSIGN_OR_RAISE(auto last_order, SortIndicesOf(last_rows, options_.keys));
    const Source* lowest = bounding[static_cast<size_t>(last_order->Value(0))];
    int64_t boundary = 0;
    for (size_t i = 0; i < active.size(); ++i) {
      if (active[i] == lowest) boundary = offsets[i] + active[i]->window->num_rows() - 1;
    }
    int64_t cut = 0;  // position of the boundary row in the sorted order
    while (static_cast<int64_t>(order->Value(cut)) != boundary) ++cut;
    std::vector<uint8_t> emitted(static_cast<size_t>(total), 0);
    for (int64_t p = 0; p <= cut; ++p) emitted[order->Value(p)] = 1;
    ARROW_ASSIGN_OR_RAISE(auto out, TakeRows(all, order->Slice(0, cut + 1)));
    ARROW_RETURN_NOT_OK(emit(out));
    // What stays of each window: its rows not emitted, still in order (a subsequence of a sorted run).
    for (size_t i = 0; i < active.size(); ++i) {
      const int64_t n = active[i]->window->num_rows();
      arrow::BooleanBuilder keep;
      ARROW_RETURN_NOT_OK(keep.Reserve(n));
      int64_t kept = 0;
      for (int64_t r = 0; r < n; ++r) {
        const bool k = emitted[static_cast<size_t>(offsets[i] + r)] == 0;
        keep.UnsafeAppend(k);
        kept += k ? 1 : 0;
      }
      if (kept == 0) {
        active[i]->window.reset();
      } else if (kept < n) {
        ARROW_ASSIGN_OR_RAISE(auto mask, keep.Finish());
        ARROW_ASSIGN_OR_RAISE(auto filtered, cp::Filter(arrow::Datum(active[i]->window), arrow::Datum(mask)));
        active[i]->window = filtered.record_batch();
      }
    }
  }
}

}  // namespace lakesync::plan
