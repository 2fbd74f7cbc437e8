#pragma once

#include "lakesync/iceberg/expr/expression.h"
#include "lakesync/iceberg/model/schema.h"
#include "lakesync/table/scan.h"

namespace lakesync::table {

// What planning decided and reading needs.
struct TableScan::State {
  iceberg::SchemaPtr schema;  // the schema the scan reads with
  iceberg::BoundExpr filter;  // bound to `schema`
  iceberg::SchemaPtr output;  // the selected columns
};

}  // namespace lakesync::table
