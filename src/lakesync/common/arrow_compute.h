// The one place that registers Arrow's compute functions (casts, Take, Filter, comparisons).
#pragma once

#include "lakesync/common/status.h"

namespace lakesync {

// Arrow's compute kernels live in their own library and are registered once per process by
// arrow::compute::Initialize. Every caller of those functions asks here first: a batch may be converted
// or filtered on a pool thread before anything else in the process needed the kernels. Cheap after the
// first call; returns the first call's result.
Status EnsureArrowCompute();

}  // namespace lakesync
