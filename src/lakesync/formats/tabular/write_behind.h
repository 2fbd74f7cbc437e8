// A RecordWriter that writes behind its caller: Write queues the batch and returns, and one task at a
// time on Arrow's IO executor writes the queued batches, in order, through the wrapped writer. A
// producer whose batches cost CPU to make (the changelog's next snapshot, counted and netted while
// the last one's rows are encoded and compressed) then works instead of waiting on the writer: the
// changelog's cores sat idle ~15% of the time between those phases (docs/benchmarks.md, stop 37).
//
// The bytes are those the wrapped writer alone writes: the same batches, in the same order, written
// by one task at a time. With one thread (`--threads 1`, executor.h) WriteBehind returns the wrapped
// writer itself: a second working thread would break that setting's bound.
//
// Memory: at most `max_queued_bytes` of batches (their Arrow buffers) are queued or being written;
// a Write that would pass it waits for room (one batch larger than the bound is taken alone).
// Errors: the wrapped writer's first error is returned by the next Write, Flush or Close, and the
// batches queued after the one that failed are dropped. Flush and Close wait for the queue to drain,
// then flush or close the wrapped writer on the caller's thread. The destructor too waits for every
// queued batch to be written, so that a caller stopping early (an error reading its input) leaves what
// it handed over written, as the wrapped writer alone would.
//
// Why the IO executor and not the engine's CPU pool: the task waits (on the file, and on the wrapped
// Parquet writer's column encoding, which runs on the CPU pool), and a CPU pool thread waiting on
// tasks queued behind it could deadlock the pool (common/executor.h).
#pragma once

#include <cstdint>
#include <memory>

#include "lakesync/formats/tabular/tabular.h"

namespace lakesync::tabular {

std::unique_ptr<RecordWriter> WriteBehind(std::unique_ptr<RecordWriter> writer, int64_t max_queued_bytes);

}  // namespace lakesync::tabular
