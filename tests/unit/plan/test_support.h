// Helpers for the plan tests: batches from JSON columns (Arrow's own parser, independent of the code
// under test), rendering collapsed output as multisets of row strings, and draining a collapser.
#pragma once

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakesync/plan/change_collapser.h"

namespace lakesync::plan::testing {

// The change stream most collapse tests use: key id, payload name, sequence seq, change type op.
inline std::shared_ptr<arrow::Schema> ChangeSchema() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                        arrow::field("seq", arrow::int64()), arrow::field("op", arrow::utf8())});
}

// Collapse options for ChangeSchema(): key id, output id and name.
inline CollapseOptions ChangeOptions() {
  CollapseOptions options;
  options.key_columns = {"id"};
  options.sequence_column = "seq";
  options.change_type_column = "op";
  options.output_columns = {"id", "name"};
  options.source_name = "changes.parquet";
  return options;
}

// One JSON array per column, e.g. Batch(schema, {"[1, 2]", "[\"a\", null]"}).
inline std::shared_ptr<arrow::RecordBatch> Batch(const std::shared_ptr<arrow::Schema>& schema,
                                                 const std::vector<std::string>& columns) {
  arrow::ArrayVector arrays;
  int64_t rows = -1;
  for (int i = 0; i < schema->num_fields(); ++i) {
    auto array = arrow::json::ArrayFromJSONString(schema->field(i)->type(), columns.at(i));
    EXPECT_TRUE(array.ok()) << schema->field(i)->name() << ": " << array.status().ToString();
    if (!array.ok()) return nullptr;
    rows = (*array)->length();
    arrays.push_back(*array);
  }
  return arrow::RecordBatch::Make(schema, rows, arrays);
}

// Rows of a table as "v1|v2|..." strings, counted (a multiset).
inline std::map<std::string, int> RowSet(const std::shared_ptr<arrow::Table>& table) {
  std::map<std::string, int> out;
  if (!table) return out;
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    std::string row;
    for (int c = 0; c < batch->num_columns(); ++c) {
      auto scalar = batch->column(c)->GetScalar(r).ValueOrDie();
      row += (c ? "|" : "") + (scalar->is_valid ? scalar->ToString() : std::string("null"));
    }
    ++out[row];
  }
  return out;
}

inline std::map<std::string, int> Rows(std::initializer_list<std::string> rows) {
  std::map<std::string, int> out;
  for (const auto& r : rows) ++out[r];
  return out;
}

struct Collected {
  std::map<std::string, int> rows;
  std::map<std::string, int> deletes;
  int parts = 0;
  std::vector<std::map<std::string, int>> part_keys;  // key strings per part (rows and deletes)
};

// Drains NextPart; `key_columns` counts the leading columns that make up the key in rendered rows.
inline Collected Drain(ChangeCollapser& collapser, int key_columns = 1) {
  Collected out;
  while (true) {
    auto next = collapser.NextPart();
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok() || !next->has_value()) break;
    ++out.parts;
    const CollapsedPart& part = **next;
    EXPECT_TRUE(part.rows->schema()->Equals(*collapser.output_schema()));
    EXPECT_TRUE(part.deletes->schema()->Equals(*collapser.output_schema()));
    std::map<std::string, int> keys;
    for (const auto* set : {&part.rows, &part.deletes}) {
      for (const auto& [row, count] : RowSet(*set)) {
        (&part.rows == set ? out.rows : out.deletes)[row] += count;
        size_t cut = 0;
        for (int k = 0; k < key_columns; ++k) cut = row.find('|', cut == 0 && k == 0 ? 0 : cut + 1);
        keys[row.substr(0, cut)] += count;
      }
    }
    out.part_keys.push_back(std::move(keys));
  }
  return out;
}

inline std::string ErrorOf(const Status& status) { return status.ok() ? "<ok>" : status.ToString(); }

}  // namespace lakesync::plan::testing
