// The engine's one executor: Arrow's CPU thread pool. Every hot path that works in parallel (scan
// units, change feed files, key resolution, delete writing) runs its work through OrderedStream or
// ParallelMap below, and Arrow's own parallel code (Parquet column decoding) uses the same pool, so
// one setting bounds the threads of the whole process: `--threads N`, `LAKESYNC_THREADS`, or a job's
// `threads:` (default: the machine's cores).
//
// Results always come back in input order, whatever the thread count, so output is deterministic:
// work is split into units whose results do not depend on which thread ran them, and units are
// consumed in the order they were made.
//
// Nested parallelism: a pool thread that waited on work queued behind it could deadlock the pool, so
// an OrderedStream used from a pool thread (or with one thread) runs its units inline, in order.
#pragma once

#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "lakesync/common/status.h"

namespace lakesync {

inline constexpr char kThreadsEnvironmentVariable[] = "LAKESYNC_THREADS";
inline constexpr int kMaxThreads = 1024;

// Parses a thread count ("4"); `origin` names where it came from in the error (InvalidArgument for
// anything but an integer in [1, kMaxThreads]).
Result<int> ParseThreadCount(std::string_view text, std::string_view origin);

// Sets the pool's size, first match wins: `requested` (the CLI's --threads), LAKESYNC_THREADS,
// `configured` (a job file's `threads:`), the machine's cores. Returns InvalidArgument for a malformed
// LAKESYNC_THREADS or a count outside [1, kMaxThreads]. A process that never calls it gets the same
// default on first use of the pool (EnsureThreadsConfigured).
Status ConfigureThreads(std::optional<int> requested = std::nullopt, std::optional<int> configured = std::nullopt);

// Applies LAKESYNC_THREADS (or the default) once, unless ConfigureThreads ran first. A malformed
// variable is reported by ConfigureThreads; here it is ignored (the default applies).
void EnsureThreadsConfigured();

// The pool's size (>= 1).
int ThreadCount();

// Whether the calling thread is one of the pool's workers.
bool OnPoolThread();

// Whether the units of a read should run one at a time on the consumer's thread, each free to use
// the pool inside (a file's columns decoded in parallel), rather than side by side on the pool: with
// one thread, from a pool thread, for a single file of one row group, or for a read with at least
// twice as many columns to decode as there are threads: its columns are then the better split, and
// a stream holds no whole row group in memory.
bool PreferSerialUnits(size_t files, size_t units_of_first_file, size_t columns);

// Runs a sequence of units of work on the pool and returns their results in the order the units were
// made. At most `window` units are in flight (submitted and not yet consumed): with units of bounded
// size (a row group, a file) memory is bounded by window × unit, whatever the thread count.
//
// `source` makes the next unit (called on the consumer's thread, in order; nullopt when there are no
// more); a unit runs on a pool thread and must touch only its own state and thread-safe shared state.
// With one thread, a window of 1, or when called from a pool thread, units run inline in Next().
// `window` counts the units running ahead while the caller works on the one Next() returned.
// The first error (from the source or a unit) is returned by Next() in its position and ends the
// stream. The destructor waits for the units in flight (they may reference the owner's state).
template <typename T>
class RunAhead;

template <typename T>
class OrderedStream {
 public:
  using Unit = std::function<Result<T>()>;
  using Source = std::function<Result<std::optional<Unit>>()>;

  // window <= 0: DefaultWindow().
  explicit OrderedStream(Source source, int window = 0) : OrderedStream(std::move(source), window, false) {}
  OrderedStream(const OrderedStream&) = delete;
  OrderedStream& operator=(const OrderedStream&) = delete;
  ~OrderedStream() {
    for (auto& f : in_flight_) f.Wait();
  }

  // Twice the pool's size: every thread has a unit to work on while the consumer takes the next.
  static int DefaultWindow() { return 2 * ThreadCount(); }
  int window() const { return window_; }

  Result<std::optional<T>> Next() {
    if (done_) return std::optional<T>();
    if (inline_) {
      auto unit = source_();
      if (!unit.ok() || !unit->has_value()) return Finish<std::optional<T>>(unit.status());
      auto result = (**unit)();
      if (!result.ok()) return Finish<std::optional<T>>(result.status());
      return std::optional<T>(std::move(*result));
    }
    Fill();
    if (in_flight_.empty()) return Finish<std::optional<T>>(source_error_);
    auto future = std::move(in_flight_.front());
    in_flight_.pop_front();
    auto result = future.MoveResult();
    if (!result.ok()) return Finish<std::optional<T>>(result.status());
    Fill();  // keep the pool busy while the caller works on this result
    return std::optional<T>(std::move(*result));
  }

 private:
  friend class RunAhead<T>;

  // `one_on_pool`: a window of 1 still runs on the pool (RunAhead), rather than inline.
  OrderedStream(Source source, int window, bool one_on_pool) : source_(std::move(source)) {
    EnsureThreadsConfigured();
    window_ = window > 0 ? window : DefaultWindow();
    inline_ = (window_ <= 1 && !one_on_pool) || ThreadCount() <= 1 || OnPoolThread();
  }

  // Submits units until the window is full or the source is exhausted. A source error is held back
  // until the units made before it have been consumed (it is the next result in order).
  void Fill() {
    while (!source_done_ && static_cast<int>(in_flight_.size()) < window_) {
      auto unit = source_();
      if (!unit.ok() || !unit->has_value()) {
        source_done_ = true;
        source_error_ = unit.status();
        return;
      }
      auto submitted = arrow::internal::GetCpuThreadPool()->Submit(std::move(**unit));
      if (!submitted.ok()) {
        source_done_ = true;
        source_error_ = submitted.status();
        return;
      }
      in_flight_.push_back(std::move(*submitted));
    }
  }

  template <typename R>
  Result<R> Finish(Status status) {
    done_ = true;
    if (status.ok()) return R();
    return status;
  }

  Source source_;
  int window_ = 1;
  bool inline_ = true;
  bool done_ = false;
  bool source_done_ = false;
  Status source_error_;
  std::deque<arrow::Future<T>> in_flight_;
};

// A sequence whose next item is computed on the pool while the caller works on the current one:
// OrderedStream with one unit running ahead (where OrderedStream would run a window of 1 inline), so
// at most one item is made and not yet returned. For sequences of large items (a snapshot prepared
// for reading) whose making would otherwise leave the pool idle between them. Same contract as
// OrderedStream: in order; an item's error is returned by Next() in its place, after the items
// before it; inline with one thread or on a pool thread; the destructor waits for the item ahead.
template <typename T>
class RunAhead {
 public:
  using Unit = typename OrderedStream<T>::Unit;
  using Source = typename OrderedStream<T>::Source;

  explicit RunAhead(Source source) : stream_(std::move(source), 1, /*one_on_pool=*/true) {}

  Result<std::optional<T>> Next() { return stream_.Next(); }

 private:
  OrderedStream<T> stream_;
};

// Runs produce(0..count-1) on the pool (at most `window` in flight, default OrderedStream's) and
// returns the results in index order; the first error in index order is returned.
template <typename T>
Result<std::vector<T>> ParallelMap(size_t count, std::function<Result<T>(size_t)> produce, int window = 0) {
  size_t next = 0;
  OrderedStream<T> stream(
      [&]() -> Result<std::optional<typename OrderedStream<T>::Unit>> {
        if (next >= count) return std::nullopt;
        const size_t i = next++;
        return std::optional<typename OrderedStream<T>::Unit>([&produce, i]() { return produce(i); });
      },
      window);
  std::vector<T> out;
  out.reserve(count);
  while (true) {
    ARROW_ASSIGN_OR_RAISE(auto item, stream.Next());
    if (!item) break;
    out.push_back(std::move(*item));
  }
  return out;
}

}  // namespace lakesync
