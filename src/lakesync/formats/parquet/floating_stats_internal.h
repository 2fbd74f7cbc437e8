// Gathers NaN counts and NaN-free min/max of every float/double leaf while batches are written
// (Parquet statistics have no NaN counts, and Java takes float bounds from its own field metrics).
#pragma once

#include <arrow/type_fwd.h>

#include <map>
#include <vector>

#include "lakesync/formats/parquet/parquet_metrics.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::parquet_io::internal {

class FloatingStatsCollector {
 public:
  explicit FloatingStatsCollector(const iceberg::Schema& schema);

  // `batch` has the schema's top-level fields in order (nested layout as ToArrowSchema gives).
  // Values under a null struct or list, or outside a list's offsets, are not counted.
  Status Update(const arrow::RecordBatch& batch);

  const std::map<int32_t, FloatingStats>& stats() const { return stats_; }
  bool empty() const { return leaves_.empty(); }

 private:
  struct Step {
    enum class Kind { kStructChild, kListElement, kMapKey, kMapValue } kind;
    int index = 0;  // struct child index
  };
  struct Leaf {
    int32_t field_id;
    int top_level;
    std::vector<Step> steps;
    bool bounds;  // reached through structs only
  };

  void Collect(const iceberg::NestedField& field, int top_level, std::vector<Step>& steps, bool bounds);

  std::vector<Leaf> leaves_;
  std::map<int32_t, FloatingStats> stats_;
};

}  // namespace lakesync::parquet_io::internal
