// A column holding one value in every row of every batch of a stream: a Delta file's partition values,
// change type and commit version; an Iceberg file's identity-partition values and defaults; a
// changelog snapshot's id, sequence number and commit time; the control columns of a snapshot import.
//
// Why: arrow::MakeArrayFromScalar writes the value row by row, so a constant column made for every
// batch costs about what decoding a column does (1.7% of the changelog's CPU in perf, stop 37). Made
// once, as long as the longest batch asked for, and handed out as Slice(0, rows) (offset 0, so every
// consumer sees an ordinary array), it costs nothing per batch. One rule for every reader.
#pragma once

#include <arrow/array.h>
#include <arrow/memory_pool.h>
#include <arrow/scalar.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "lakesync/common/status.h"

namespace lakesync {

class ConstantColumn {
 public:
  // `min_rows`: the length made at least (the stream's batch size), so that batches of up to that
  // many rows never make it again. A null `pool` is Arrow's default pool.
  explicit ConstantColumn(std::shared_ptr<arrow::Scalar> value, int64_t min_rows = 0,
                          arrow::MemoryPool* pool = arrow::default_memory_pool());
  ConstantColumn(const ConstantColumn&) = delete;
  ConstantColumn& operator=(const ConstantColumn&) = delete;

  // `rows` copies of the value. Safe to call from several threads at once.
  Result<std::shared_ptr<arrow::Array>> Get(int64_t rows) const;

 private:
  std::shared_ptr<arrow::Scalar> value_;
  int64_t min_rows_;
  arrow::MemoryPool* pool_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<arrow::Array> made_;
};

}  // namespace lakesync
