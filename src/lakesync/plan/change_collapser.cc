#include "lakesync/plan/change_collapser.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <optional>

#include "lakesync/common/arrow_compute.h"
#include "lakesync/common/executor.h"
#include "lakesync/plan/change_batch_preparer_internal.h"
#include "lakesync/plan/collapse_kernel_internal.h"
#include "lakesync/plan/key_shards.h"
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
// Key shards aim at this much buffered change data each (or a quarter of the memory limit if less),
// so that a large apply has work for several threads and a small one stays one shard (one data file).
constexpr int64_t kShardTargetBytes = 32LL << 20;

}  // namespace

namespace internal {

// One spilled bucket of changes: its full rows and its narrow rows (layout.narrow_schema), each in a
// file of its own (either may be absent), partitioned alike (same seed, same bucket number).
struct PendingBucket {
  std::optional<SpillBucket> full, narrow;
  int depth = 0;
  int32_t index = 0;

  int64_t bytes() const { return (full ? full->bytes : 0) + (narrow ? narrow->bytes : 0); }
  int64_t rows() const { return (full ? full->rows : 0) + (narrow ? narrow->rows : 0); }
};

}  // namespace internal

// One key shard: an in-memory slice of the changes, or a list of spilled buckets (re-split when one is
// above the shard's memory, collapsed one at a time).
class CollapseShard::Impl {
 public:
  Impl(int32_t index, int32_t count, const internal::CollapseLayout* layout, const CollapseOptions* options,
       internal::SpillDirectory* spill_directory, int64_t memory_limit_bytes)
      : index_(index),
        count_(count),
        layout_(layout),
        options_(options),
        spill_directory_(spill_directory),
        memory_limit_bytes_(memory_limit_bytes) {}

  Result<std::optional<CollapsedPart>> NextPart();

  int32_t index_;
  int32_t count_;
  CollapseStats stats_;
  // In memory: its full rows and its narrow rows in input order, in pieces that NextPart concatenates
  // (on the shard's thread, not the one that split the changes).
  bool has_in_memory_ = false;  // false once collapsed, or when spilled
  arrow::RecordBatchVector in_memory_;
  arrow::RecordBatchVector in_memory_narrow_;
  std::vector<internal::PendingBucket> pending_;          // processed from the back

 private:
  Result<std::optional<CollapsedPart>> Emit(const std::shared_ptr<arrow::RecordBatch>& full,
                                            const std::shared_ptr<arrow::RecordBatch>& narrow);
  Status Resplit(const internal::PendingBucket& bucket);

  const internal::CollapseLayout* layout_;
  const CollapseOptions* options_;
  internal::SpillDirectory* spill_directory_;
  int64_t memory_limit_bytes_;
};

namespace {

void RemoveFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);  // the directory removal retries; a leftover is not an error
}

// Pairs the full and narrow buckets of one partitioning by bucket number (BucketWriter::Close returns
// them in bucket order).
std::vector<internal::PendingBucket> PairBuckets(std::vector<internal::SpillBucket> full,
                                                 std::vector<internal::SpillBucket> narrow, int depth) {
  std::vector<internal::PendingBucket> out;
  size_t f = 0, m = 0;
  while (f < full.size() || m < narrow.size()) {
    const int32_t index = std::min(f < full.size() ? full[f].index : INT32_MAX,
                                   m < narrow.size() ? narrow[m].index : INT32_MAX);
    internal::PendingBucket b;
    b.depth = depth;
    b.index = index;
    if (f < full.size() && full[f].index == index) b.full = std::move(full[f++]);
    if (m < narrow.size() && narrow[m].index == index) b.narrow = std::move(narrow[m++]);
    out.push_back(std::move(b));
  }
  return out;
}

struct NarrowedBatch {
  std::shared_ptr<arrow::RecordBatch> full;    // the batch without its narrow rows
  std::shared_ptr<arrow::RecordBatch> narrow;  // its UPDATE_BEFORE and DELETE rows, narrowed; null if none
};

// Splits one prepared batch into its full rows and its UPDATE_BEFORE and DELETE rows narrowed to
// layout.narrow_schema, each part in input order.
Result<NarrowedBatch> NarrowBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                  const internal::CollapseLayout& l) {
  namespace cp = arrow::compute;
  const int8_t* ranks = std::static_pointer_cast<arrow::Int8Array>(batch->column(l.rank_position()))->raw_values();
  std::vector<int64_t> full_rows, narrow_rows;
  for (int64_t i = 0; i < batch->num_rows(); ++i) (ranks[i] <= 1 ? narrow_rows : full_rows).push_back(i);
  if (narrow_rows.empty()) return NarrowedBatch{batch, nullptr};
  auto index_array = [](std::vector<int64_t> rows) {
    const auto n = static_cast<int64_t>(rows.size());
    return std::make_shared<arrow::Int64Array>(n, arrow::Buffer::FromVector(std::move(rows)));
  };
  NarrowedBatch out;
  ARROW_ASSIGN_OR_RAISE(auto narrow, cp::Take(internal::ImageView(batch, l), index_array(std::move(narrow_rows))));
  out.narrow = narrow.record_batch();
  ARROW_ASSIGN_OR_RAISE(auto full, cp::Take(batch, index_array(std::move(full_rows))));
  out.full = full.record_batch();
  return out;
}

// The number of key shards for `bytes` of buffered changes (change_collapser.h, "Key shards"): a
// function of the input and the memory limit only, so the output does not depend on the threads.
int32_t ShardCount(int64_t bytes, int64_t memory_limit_bytes) {
  const int64_t target = std::max<int64_t>(1, std::min<int64_t>(kShardTargetBytes, memory_limit_bytes / 4));
  int32_t shards = 1;
  while (shards < kInitialBuckets && static_cast<int64_t>(shards) * target < bytes) shards *= 2;
  return shards;
}

}  // namespace

Status CollapseShard::Impl::Resplit(const internal::PendingBucket& bucket) {
  const int wanted = static_cast<int>(std::min<int64_t>(
      kMaxBuckets, std::max<int64_t>(2, 2 * bucket.bytes() / std::max<int64_t>(1, memory_limit_bytes_) + 1)));
  // The full and the narrow rows split alike, so that a key's rows of both kinds stay in one bucket.
  auto split = [&](const std::optional<internal::SpillBucket>& file, const std::shared_ptr<arrow::Schema>& schema,
                   const std::vector<int>& key_positions) -> Result<std::vector<internal::SpillBucket>> {
    if (!file) return std::vector<internal::SpillBucket>{};
    internal::BucketWriter writer(spill_directory_, schema, key_positions, wanted,
                                  internal::SpillSeed(bucket.depth + 1), bucket.depth + 1);
    ARROW_RETURN_NOT_OK(internal::ForEachSpilledBatch(
        *file, schema, [&](std::shared_ptr<arrow::RecordBatch> batch) { return writer.Write(batch); }));
    ARROW_ASSIGN_OR_RAISE(auto buckets, writer.Close());
    stats_.spilled_bytes += writer.bytes_written();
    RemoveFile(file->path);
    return buckets;
  };
  ARROW_ASSIGN_OR_RAISE(auto full, split(bucket.full, layout_->prepared_schema, layout_->key_output_positions));
  ARROW_ASSIGN_OR_RAISE(auto narrow, split(bucket.narrow, layout_->narrow_schema, layout_->narrow_key_positions));
  auto children = PairBuckets(std::move(full), std::move(narrow), bucket.depth + 1);
  // Processed from the back: the children go in reverse so that they are collapsed in bucket order.
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    // A split that moved every row into one bucket cannot get smaller (one dominant key): collapse it.
    if (it->rows() == bucket.rows()) it->depth = kMaxDepth;
    pending_.push_back(std::move(*it));
  }
  return Status::OK();
}

Result<std::optional<CollapsedPart>> CollapseShard::Impl::Emit(const std::shared_ptr<arrow::RecordBatch>& full,
                                                               const std::shared_ptr<arrow::RecordBatch>& narrow) {
  ARROW_ASSIGN_OR_RAISE(auto result, internal::CollapseInMemory(full, narrow, *layout_, options_->upsert));
  const int64_t changes = full->num_rows() + (narrow ? narrow->num_rows() : 0);
  const int64_t written = result.part.rows->num_rows();
  stats_.keys += result.keys;
  stats_.rows_to_write += written;
  stats_.keys_to_delete += result.part.deletes->num_rows();
  stats_.collapsed_away += changes - written;
  if (written == 0 && result.part.deletes->num_rows() == 0) return std::optional<CollapsedPart>();
  return std::optional<CollapsedPart>(std::move(result.part));
}

Result<std::optional<CollapsedPart>> CollapseShard::Impl::NextPart() {
  if (has_in_memory_) {
    has_in_memory_ = false;
    auto concatenate = [](arrow::RecordBatchVector pieces,
                          const std::shared_ptr<arrow::Schema>& schema) -> Result<std::shared_ptr<arrow::RecordBatch>> {
      if (pieces.empty()) return arrow::RecordBatch::MakeEmpty(schema);
      if (pieces.size() == 1) return pieces.front();
      return arrow::ConcatenateRecordBatches(pieces);
    };
    LS_ASSIGN_OR_RAISE_CTX(auto full, concatenate(std::move(in_memory_), layout_->prepared_schema),
                           "collapsing changes of {}", options_->source_name);
    LS_ASSIGN_OR_RAISE_CTX(auto narrow, concatenate(std::move(in_memory_narrow_), layout_->narrow_schema),
                           "collapsing changes of {}", options_->source_name);
    in_memory_.clear();
    in_memory_narrow_.clear();
    LS_ASSIGN_OR_RAISE_CTX(auto part, Emit(full, narrow), "collapsing changes of {}", options_->source_name);
    if (part) return part;
  }
  while (!pending_.empty()) {
    internal::PendingBucket bucket = std::move(pending_.back());
    pending_.pop_back();
    if (bucket.bytes() > memory_limit_bytes_ && bucket.depth < kMaxDepth && bucket.rows() > 1) {
      LS_RETURN_NOT_OK_CTX(Resplit(bucket), "re-splitting spilled changes of {}", options_->source_name);
      continue;
    }
    auto read = [&](const std::optional<internal::SpillBucket>& file,
                    const std::shared_ptr<arrow::Schema>& schema) -> Result<std::shared_ptr<arrow::RecordBatch>> {
      if (!file) return arrow::RecordBatch::MakeEmpty(schema);
      ARROW_ASSIGN_OR_RAISE(auto batch, internal::ReadBucket(*file, schema));
      RemoveFile(file->path);
      return batch;
    };
    LS_ASSIGN_OR_RAISE_CTX(auto full, read(bucket.full, layout_->prepared_schema), "collapsing spilled changes of {}",
                           options_->source_name);
    LS_ASSIGN_OR_RAISE_CTX(auto narrow, read(bucket.narrow, layout_->narrow_schema),
                           "collapsing spilled changes of {}", options_->source_name);
    LS_ASSIGN_OR_RAISE_CTX(auto part, Emit(full, narrow), "collapsing spilled changes of {}", options_->source_name);
    if (part) return part;
  }
  return std::optional<CollapsedPart>();
}

CollapseShard::CollapseShard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CollapseShard::~CollapseShard() = default;
Result<std::optional<CollapsedPart>> CollapseShard::NextPart() { return impl_->NextPart(); }
const CollapseStats& CollapseShard::stats() const { return impl_->stats_; }
int32_t CollapseShard::index() const { return impl_->index_; }
int32_t CollapseShard::count() const { return impl_->count_; }

class ChangeCollapser::Impl {
 public:
  Impl(internal::CollapseLayout layout, CollapseOptions options)
      : options_(std::move(options)), preparer_(std::move(layout), options_) {}

  Status Add(const std::shared_ptr<arrow::RecordBatch>& batch);
  Result<std::optional<CollapsedPart>> NextPart();
  Result<std::vector<std::shared_ptr<CollapseShard>>> TakeShards();
  bool has_shards() const { return shards_.has_value(); }
  void taken_by_caller() { taken_by_caller_ = true; }
  const internal::CollapseLayout& layout() const { return preparer_.layout(); }
  CollapseStats stats() const;

  CollapseStats stats_;
  arrow::RecordBatchVector dead_letters_;

 private:
  Status Narrow();
  Status Spill();

  CollapseOptions options_;
  internal::ChangePreparer preparer_;
  int64_t rows_seen_ = 0;
  bool adding_ = true;
  // Buffered changes in input order: full rows (prepared_schema), of which those from `narrowed_up_to_`
  // on still hold their UPDATE_BEFORE and DELETE rows, and the narrow rows taken out of the others.
  arrow::RecordBatchVector buffered_;
  arrow::RecordBatchVector buffered_narrow_;
  size_t narrowed_up_to_ = 0;
  bool narrowing_ = false;  // once narrowing started, every batch is narrowed (see Narrow)
  int64_t buffered_bytes_ = 0;
  std::unique_ptr<internal::SpillDirectory> spill_directory_;
  std::unique_ptr<internal::BucketWriter> bucket_writer_;
  std::unique_ptr<internal::BucketWriter> narrow_writer_;
  // Taken (TakeShards), or made by NextPart, which then walks them in order.
  std::optional<std::vector<std::shared_ptr<CollapseShard>>> shards_;
  size_t next_shard_ = 0;
  bool taken_by_caller_ = false;
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
  if (buffered_bytes_ > options_.memory_limit_bytes && layout().narrows()) {
    LS_RETURN_NOT_OK_CTX(Narrow(), "narrowing the changes of {}", options_.source_name);
  }
  if (buffered_bytes_ > options_.memory_limit_bytes) return Spill();
  return Status::OK();
}

// Moves the UPDATE_BEFORE and DELETE rows of the batches not narrowed yet into narrow batches (their
// images need only layout().narrow_schema's columns), and counts the bytes of those batches again
// (the others are unchanged: once the buffer sits near the limit this runs on every Add). Once started it
// covers every batch before it is collapsed or spilled, so a narrow row never ties with a full row
// on (key, sequence, rank) and the rule's input order survives narrow rows being placed after full ones.
Status ChangeCollapser::Impl::Narrow() {
  narrowing_ = true;
  const size_t from = narrowed_up_to_;
  // Batch by batch on the executor, gathered in input order.
  ARROW_ASSIGN_OR_RAISE(auto split, ParallelMap<NarrowedBatch>(buffered_.size() - from, [&](size_t i) {
    return NarrowBatch(buffered_[from + i], layout());
  }));
  for (size_t i = 0; i < split.size(); ++i) {
    auto& slot = buffered_[from + i];
    buffered_bytes_ -= arrow::util::TotalBufferSize(*slot);
    slot = std::move(split[i].full);  // may be empty: kept, harmless
    buffered_bytes_ += arrow::util::TotalBufferSize(*slot);
    if (split[i].narrow) {
      buffered_bytes_ += arrow::util::TotalBufferSize(*split[i].narrow);
      buffered_narrow_.push_back(std::move(split[i].narrow));
    }
  }
  narrowed_up_to_ = buffered_.size();
  return Status::OK();
}

Status ChangeCollapser::Impl::Spill() {
  if (narrowing_) LS_RETURN_NOT_OK_CTX(Narrow(), "narrowing the changes of {}", options_.source_name);
  if (!bucket_writer_) {
    LS_ASSIGN_OR_RAISE_CTX(spill_directory_, internal::SpillDirectory::Create(options_.spill_directory),
                           "spilling changes of {}", options_.source_name);
    bucket_writer_ = std::make_unique<internal::BucketWriter>(spill_directory_.get(), layout().prepared_schema,
                                                              layout().key_output_positions, kInitialBuckets,
                                                              internal::SpillSeed(0), 0);
    narrow_writer_ = std::make_unique<internal::BucketWriter>(spill_directory_.get(), layout().narrow_schema,
                                                              layout().narrow_key_positions, kInitialBuckets,
                                                              internal::SpillSeed(0), 0);
  }
  const int64_t written_before = bucket_writer_->bytes_written() + narrow_writer_->bytes_written();
  for (const auto& batch : buffered_) {
    LS_RETURN_NOT_OK_CTX(bucket_writer_->Write(batch), "spilling changes of {}", options_.source_name);
  }
  for (const auto& batch : buffered_narrow_) {
    LS_RETURN_NOT_OK_CTX(narrow_writer_->Write(batch), "spilling changes of {}", options_.source_name);
  }
  stats_.spilled_bytes += bucket_writer_->bytes_written() + narrow_writer_->bytes_written() - written_before;
  buffered_.clear();
  buffered_narrow_.clear();
  narrowed_up_to_ = 0;
  buffered_bytes_ = 0;
  return Status::OK();
}

Result<std::vector<std::shared_ptr<CollapseShard>>> ChangeCollapser::Impl::TakeShards() {
  if (shards_) return InvalidArgument("the changes of {} were already split into shards", options_.source_name);
  adding_ = false;
  std::vector<std::shared_ptr<CollapseShard>> shards;
  auto make_shard = [&](int32_t index, int32_t count, int64_t limit) {
    shards.push_back(std::make_shared<CollapseShard>(std::make_unique<CollapseShard::Impl>(
        index, count, &layout(), &options_, spill_directory_.get(), limit)));
    return shards.back()->impl();
  };
  if (!bucket_writer_) {
    // Nothing spilled: the changes in memory, split by key shard batch by batch on the executor; each
    // shard concatenates its pieces (in input order) when it is collapsed.
    if (narrowing_) LS_RETURN_NOT_OK_CTX(Narrow(), "narrowing the changes of {}", options_.source_name);
    if (!buffered_.empty()) {
      const int32_t count = ShardCount(buffered_bytes_, options_.memory_limit_bytes);
      buffered_bytes_ = 0;
      const int64_t limit = options_.memory_limit_bytes / count;
      std::vector<arrow::RecordBatchVector> full(static_cast<size_t>(count)), narrow(static_cast<size_t>(count));
      if (count == 1) {
        full[0] = std::move(buffered_);
        narrow[0] = std::move(buffered_narrow_);
      } else {
        std::vector<std::string> key_names;
        for (int p : layout().key_output_positions) key_names.push_back(layout().prepared_schema->field(p)->name());
        auto split = [&](arrow::RecordBatchVector& batches, std::vector<arrow::RecordBatchVector>& pieces) -> Status {
          using Split = std::vector<std::pair<int32_t, std::shared_ptr<arrow::RecordBatch>>>;
          ARROW_ASSIGN_OR_RAISE(auto splits, ParallelMap<Split>(batches.size(), [&](size_t i) {
            return SplitByKeyShard(batches[i], key_names, count);
          }));
          batches.clear();
          for (auto& one : splits) {
            for (auto& [index, rows] : one) pieces[static_cast<size_t>(index)].push_back(std::move(rows));
          }
          return Status::OK();
        };
        LS_RETURN_NOT_OK_CTX(split(buffered_, full), "collapsing changes of {}", options_.source_name);
        LS_RETURN_NOT_OK_CTX(split(buffered_narrow_, narrow), "collapsing changes of {}", options_.source_name);
      }
      buffered_.clear();
      buffered_narrow_.clear();
      narrowed_up_to_ = 0;
      for (int32_t s = 0; s < count; ++s) {
        const auto i = static_cast<size_t>(s);
        if (full[i].empty() && narrow[i].empty()) continue;
        auto* shard = make_shard(s, count, limit);
        shard->has_in_memory_ = true;
        shard->in_memory_ = std::move(full[i]);
        shard->in_memory_narrow_ = std::move(narrow[i]);
      }
    }
    shards_ = shards;
    return shards;
  }
  LS_RETURN_NOT_OK_CTX(Spill(), "spilling changes of {}", options_.source_name);
  const int64_t written_before = bucket_writer_->bytes_written() + narrow_writer_->bytes_written();
  LS_ASSIGN_OR_RAISE_CTX(auto full, bucket_writer_->Close(), "spilling changes of {}", options_.source_name);
  LS_ASSIGN_OR_RAISE_CTX(auto narrow, narrow_writer_->Close(), "spilling changes of {}", options_.source_name);
  // the files' footers
  stats_.spilled_bytes += bucket_writer_->bytes_written() + narrow_writer_->bytes_written() - written_before;
  bucket_writer_.reset();
  narrow_writer_.reset();
  auto buckets = PairBuckets(std::move(full), std::move(narrow), 0);
  int64_t bytes = 0;
  for (const auto& b : buckets) bytes += b.bytes();
  // The first buckets are key-shard hash ranges (SpillSeed(0) is the key-shard seed): shard s of
  // `count` (a power of two ≤ kInitialBuckets) is buckets [s·k, (s+1)·k) with k = kInitialBuckets / count.
  const int32_t count = ShardCount(bytes, options_.memory_limit_bytes);
  const int64_t limit = std::max<int64_t>(1, options_.memory_limit_bytes / count);
  CollapseShard::Impl* current = nullptr;
  for (auto& b : buckets) {
    const int32_t index = b.index / (kInitialBuckets / count);
    if (!current || current->index_ != index) current = make_shard(index, count, limit);
    current->pending_.push_back(std::move(b));
  }
  for (auto& shard : shards) std::reverse(shard->impl()->pending_.begin(), shard->impl()->pending_.end());
  shards_ = shards;
  return shards;
}

Result<std::optional<CollapsedPart>> ChangeCollapser::Impl::NextPart() {
  if (taken_by_caller_) return InvalidArgument("changes of {}: NextPart after TakeShards", options_.source_name);
  if (!shards_) ARROW_RETURN_NOT_OK(TakeShards().status());
  while (next_shard_ < shards_->size()) {
    ARROW_ASSIGN_OR_RAISE(auto part, (*shards_)[next_shard_]->NextPart());
    if (part) return part;
    ++next_shard_;
  }
  spill_directory_.reset();  // every bucket is done: remove the directory now, not at destruction
  return std::optional<CollapsedPart>();
}

CollapseStats ChangeCollapser::Impl::stats() const {
  CollapseStats s = stats_;
  if (shards_) {
    for (const auto& shard : *shards_) {
      const auto& t = shard->stats();
      s.keys += t.keys;
      s.rows_to_write += t.rows_to_write;
      s.keys_to_delete += t.keys_to_delete;
      s.collapsed_away += t.collapsed_away;
      s.spilled_bytes += t.spilled_bytes;
    }
  }
  return s;
}

ChangeCollapser::ChangeCollapser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChangeCollapser::~ChangeCollapser() = default;

Result<std::unique_ptr<ChangeCollapser>> ChangeCollapser::Make(std::shared_ptr<arrow::Schema> input_schema,
                                                               CollapseOptions options) {
  ARROW_RETURN_NOT_OK(EnsureArrowCompute());
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

Result<std::vector<std::shared_ptr<CollapseShard>>> ChangeCollapser::TakeShards() {
  if (impl_->has_shards()) return InvalidArgument("the changes were already split into shards");
  impl_->taken_by_caller();
  return impl_->TakeShards();
}

CollapseStats ChangeCollapser::stats() const { return impl_->stats(); }

const std::shared_ptr<arrow::Schema>& ChangeCollapser::output_schema() const { return impl_->layout().output_schema; }

std::shared_ptr<arrow::Table> ChangeCollapser::dead_letters() const {
  const auto& schema = impl_->layout().dead_letter_schema;
  auto table = arrow::Table::FromRecordBatches(schema, impl_->dead_letters_);
  if (table.ok()) return *table;
  return arrow::Table::MakeEmpty(schema).ValueOrDie();
}

}  // namespace lakesync::plan
