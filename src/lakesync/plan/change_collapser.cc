#include "lakesync/plan/change_collapser.h"

#include <arrow/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <filesystem>

#include "lakesync/plan/change_batch_preparer_internal.h"
#include "lakesync/plan/collapse_kernel_internal.h"
#include "lakesync/plan/spill_store_internal.h"

namespace lakesync::plan {
namespace {

// First partitioning: enough buckets that a few times the memory limit still fits bucket by bucket
// without re-splitting; more input is handled by splitting oversized buckets again.
constexpr int kInitialBuckets = 32;
constexpr int kMaxBuckets = 256;
// Each re-split uses a new hash seed; past this depth a bucket is collapsed whatever its size (this
// only happens when one key holds most of the bucket's changes).
constexpr int kMaxDepth = 6;

Status EnsureComputeKernels() {
  // Arrow's compute kernels live in their own library and must be registered once per process.
  static const Status kRegistered = arrow::compute::Initialize();
  return kRegistered;
}

}  // namespace

class ChangeCollapser::Impl {
 public:
  Impl(internal::CollapseLayout layout, CollapseOptions options)
      : options_(std::move(options)), preparer_(std::move(layout), options_) {}

  Status Add(const std::shared_ptr<arrow::RecordBatch>& batch);
  Result<std::optional<CollapsedPart>> NextPart();
  const internal::CollapseLayout& layout() const { return preparer_.layout(); }

  CollapseStats stats_;
  arrow::RecordBatchVector dead_letters_;

 private:
  Status Spill();
  Status FinishAdding();
  Result<std::optional<CollapsedPart>> Emit(const std::shared_ptr<arrow::RecordBatch>& prepared);
  Status Resplit(const internal::SpillBucket& bucket);
  void RemoveFile(const std::string& path);

  CollapseOptions options_;
  internal::ChangePreparer preparer_;
  int64_t rows_seen_ = 0;
  bool adding_ = true;
  bool in_memory_done_ = false;
  arrow::RecordBatchVector buffered_;
  int64_t buffered_bytes_ = 0;
  std::unique_ptr<internal::SpillDirectory> spill_directory_;
  std::unique_ptr<internal::BucketWriter> bucket_writer_;
  std::vector<internal::SpillBucket> pending_;  // processed from the back
};

Status ChangeCollapser::Impl::Add(const std::shared_ptr<arrow::RecordBatch>& batch) {
  if (!adding_) return InvalidArgument("changes added to {} after collapsing started", options_.source_name);
  if (!batch) return InvalidArgument("null batch of changes");
  const auto& expected = *layout().input_schema;
  if (!batch->schema()->Equals(expected, /*check_metadata=*/false)) {
    std::string difference;
    for (int i = 0; i < std::max(expected.num_fields(), batch->num_columns()); ++i) {
      if (i >= expected.num_fields() || i >= batch->num_columns() ||
          !batch->schema()->field(i)->Equals(*expected.field(i))) {
        difference = fmt::format("column {} is {}, expected {}", i + 1,
                                 i < batch->num_columns() ? batch->schema()->field(i)->ToString() : "missing",
                                 i < expected.num_fields() ? expected.field(i)->ToString() : "no column");
        break;
      }
    }
    return InvalidArgument("a batch of {} does not match the change schema: {}", options_.source_name, difference);
  }
  const int64_t rows_before = rows_seen_;
  rows_seen_ += batch->num_rows();
  ARROW_ASSIGN_OR_RAISE(auto prepared, preparer_.Prepare(batch, rows_before));

  stats_.changes += batch->num_rows();
  stats_.update_befores += prepared.rank_counts[0];
  stats_.deletes += prepared.rank_counts[1];
  stats_.update_afters += prepared.rank_counts[2];
  stats_.inserts += prepared.rank_counts[3];
  stats_.collapsed_away += prepared.dropped_before_images;
  if (prepared.dead) {
    stats_.dead_letters += prepared.dead->num_rows();
    dead_letters_.push_back(std::move(prepared.dead));
  }
  if (prepared.rows->num_rows() == 0) return Status::OK();
  buffered_bytes_ += arrow::util::TotalBufferSize(*prepared.rows);
  buffered_.push_back(std::move(prepared.rows));
  if (buffered_bytes_ > options_.memory_limit_bytes) return Spill();
  return Status::OK();
}

Status ChangeCollapser::Impl::Spill() {
  if (!bucket_writer_) {
    LS_ASSIGN_OR_RAISE_CTX(spill_directory_, internal::SpillDirectory::Create(options_.spill_directory),
                           "spilling changes of {}", options_.source_name);
    std::vector<int> key_positions = layout().key_output_positions;
    bucket_writer_ = std::make_unique<internal::BucketWriter>(spill_directory_.get(), layout().prepared_schema,
                                                              std::move(key_positions), kInitialBuckets,
                                                              internal::SpillSeed(0), 0);
  }
  const int64_t written_before = bucket_writer_->bytes_written();
  for (const auto& batch : buffered_) {
    LS_RETURN_NOT_OK_CTX(bucket_writer_->Write(batch), "spilling changes of {}", options_.source_name);
  }
  stats_.spilled_bytes += bucket_writer_->bytes_written() - written_before;
  buffered_.clear();
  buffered_bytes_ = 0;
  return Status::OK();
}

Status ChangeCollapser::Impl::FinishAdding() {
  adding_ = false;
  if (!bucket_writer_) return Status::OK();
  ARROW_RETURN_NOT_OK(Spill());
  const int64_t written_before = bucket_writer_->bytes_written();
  ARROW_ASSIGN_OR_RAISE(pending_, bucket_writer_->Close());
  stats_.spilled_bytes += bucket_writer_->bytes_written() - written_before;  // the files' footers
  bucket_writer_.reset();
  std::reverse(pending_.begin(), pending_.end());
  return Status::OK();
}

void ChangeCollapser::Impl::RemoveFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);  // the directory removal retries; a leftover is not an error
}

Status ChangeCollapser::Impl::Resplit(const internal::SpillBucket& bucket) {
  const int wanted = static_cast<int>(std::min<int64_t>(
      kMaxBuckets, std::max<int64_t>(2, 2 * bucket.bytes / std::max<int64_t>(1, options_.memory_limit_bytes) + 1)));
  internal::BucketWriter writer(spill_directory_.get(), layout().prepared_schema, layout().key_output_positions,
                                wanted, internal::SpillSeed(bucket.depth + 1), bucket.depth + 1);
  ARROW_RETURN_NOT_OK(internal::ForEachSpilledBatch(
      bucket, layout().prepared_schema,
      [&](std::shared_ptr<arrow::RecordBatch> batch) { return writer.Write(batch); }));
  ARROW_ASSIGN_OR_RAISE(auto buckets, writer.Close());
  stats_.spilled_bytes += writer.bytes_written();
  RemoveFile(bucket.path);
  for (auto& child : buckets) {
    // A split that moved every row into one bucket cannot get smaller (one dominant key): collapse it.
    if (child.rows == bucket.rows) child.depth = kMaxDepth;
    pending_.push_back(std::move(child));
  }
  return Status::OK();
}

Result<std::optional<CollapsedPart>> ChangeCollapser::Impl::Emit(
    const std::shared_ptr<arrow::RecordBatch>& prepared) {
  ARROW_ASSIGN_OR_RAISE(auto result, internal::CollapseInMemory(prepared, layout().key_output_positions,
                                                                layout().output_schema, options_.upsert));
  const int64_t written = result.part.rows->num_rows();
  stats_.keys += result.keys;
  stats_.rows_to_write += written;
  stats_.keys_to_delete += result.part.deletes->num_rows();
  stats_.collapsed_away += prepared->num_rows() - written;
  if (written == 0 && result.part.deletes->num_rows() == 0) return std::optional<CollapsedPart>();
  return std::optional<CollapsedPart>(std::move(result.part));
}

Result<std::optional<CollapsedPart>> ChangeCollapser::Impl::NextPart() {
  if (adding_) {
    LS_RETURN_NOT_OK_CTX(FinishAdding(), "spilling changes of {}", options_.source_name);
  }
  if (!spill_directory_) {
    // Nothing spilled: everything is one in-memory part.
    if (in_memory_done_ || buffered_.empty()) {
      in_memory_done_ = true;
      return std::optional<CollapsedPart>();
    }
    in_memory_done_ = true;
    std::shared_ptr<arrow::RecordBatch> all = buffered_.front();
    if (buffered_.size() > 1) {
      LS_ASSIGN_OR_RAISE_CTX(all, arrow::ConcatenateRecordBatches(buffered_), "collapsing changes of {}",
                             options_.source_name);
    }
    buffered_.clear();
    buffered_bytes_ = 0;
    LS_ASSIGN_OR_RAISE_CTX(auto part, Emit(all), "collapsing changes of {}", options_.source_name);
    return part;
  }
  while (!pending_.empty()) {
    internal::SpillBucket bucket = std::move(pending_.back());
    pending_.pop_back();
    if (bucket.bytes > options_.memory_limit_bytes && bucket.depth < kMaxDepth && bucket.rows > 1) {
      LS_RETURN_NOT_OK_CTX(Resplit(bucket), "re-splitting spilled changes of {}", options_.source_name);
      continue;
    }
    LS_ASSIGN_OR_RAISE_CTX(auto batch, internal::ReadBucket(bucket, layout().prepared_schema),
                           "collapsing spilled changes of {}", options_.source_name);
    RemoveFile(bucket.path);
    LS_ASSIGN_OR_RAISE_CTX(auto part, Emit(batch), "collapsing spilled changes of {}", options_.source_name);
    if (part) return part;
  }
  spill_directory_.reset();  // every bucket is done: remove the directory now, not at destruction
  in_memory_done_ = true;
  return std::optional<CollapsedPart>();
}

ChangeCollapser::ChangeCollapser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChangeCollapser::~ChangeCollapser() = default;

Result<std::unique_ptr<ChangeCollapser>> ChangeCollapser::Make(std::shared_ptr<arrow::Schema> input_schema,
                                                               CollapseOptions options) {
  ARROW_RETURN_NOT_OK(EnsureComputeKernels());
  if (options.source_name.empty()) options.source_name = "changes";
  if (options.memory_limit_bytes < 1) {
    return InvalidArgument("memory limit for collapsing {} must be positive, got {}", options.source_name,
                           options.memory_limit_bytes);
  }
  ARROW_ASSIGN_OR_RAISE(auto layout, internal::ResolveLayout(input_schema, options));
  return std::unique_ptr<ChangeCollapser>(
      new ChangeCollapser(std::make_unique<Impl>(std::move(layout), std::move(options))));
}

Status ChangeCollapser::Add(const std::shared_ptr<arrow::RecordBatch>& changes) { return impl_->Add(changes); }

Result<std::optional<CollapsedPart>> ChangeCollapser::NextPart() { return impl_->NextPart(); }

const CollapseStats& ChangeCollapser::stats() const { return impl_->stats_; }

const std::shared_ptr<arrow::Schema>& ChangeCollapser::output_schema() const { return impl_->layout().output_schema; }

std::shared_ptr<arrow::Table> ChangeCollapser::dead_letters() const {
  const auto& schema = impl_->layout().dead_letter_schema;
  auto table = arrow::Table::FromRecordBatches(schema, impl_->dead_letters_);
  if (table.ok()) return *table;
  return arrow::Table::MakeEmpty(schema).ValueOrDie();
}

}  // namespace lakesync::plan
