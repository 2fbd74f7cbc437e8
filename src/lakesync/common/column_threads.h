// The one rule for code that may split a batch's columns over the engine's executor (Arrow's
// `use_threads` when reading or writing Parquet, the column copies of a row selection).
#pragma once

namespace lakesync {

// Whether code asked to split its work over the pool (`wanted`) may do so: only with more than one
// thread and never from a pool thread, which would wait on tasks queued behind it and could deadlock
// the pool (common/executor.h). Every reader and writer that takes `use_threads` goes through it.
bool ColumnThreads(bool wanted);

}  // namespace lakesync
