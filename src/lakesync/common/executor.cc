#include "lakesync/common/executor.h"

#include <arrow/util/thread_pool.h>

#include <charconv>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "lakesync/common/column_threads.h"

namespace lakesync {
namespace {

std::once_flag configured_once;

int MachineCores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

Result<int> ResolveThreads(std::optional<int> requested, std::optional<int> configured) {
  if (requested) {
    if (*requested < 1 || *requested > kMaxThreads) {
      return InvalidArgument("threads must be between 1 and {}, got {}", kMaxThreads, *requested);
    }
    return *requested;
  }
  if (const char* env = std::getenv(kThreadsEnvironmentVariable); env != nullptr && *env != '\0') {
    return ParseThreadCount(env, kThreadsEnvironmentVariable);
  }
  if (configured) return ResolveThreads(configured, std::nullopt);
  return MachineCores();
}

}  // namespace

Result<int> ParseThreadCount(std::string_view text, std::string_view origin) {
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxThreads) {
    return InvalidArgument("{} must be a whole number of threads between 1 and {}, got '{}'", origin, kMaxThreads,
                           std::string(text));
  }
  return n;
}

Status ConfigureThreads(std::optional<int> requested, std::optional<int> configured) {
  ARROW_ASSIGN_OR_RAISE(int threads, ResolveThreads(requested, configured));
  // Later EnsureThreadsConfigured calls must not undo an explicit setting.
  std::call_once(configured_once, [] {});
  return arrow::SetCpuThreadPoolCapacity(threads);
}

void EnsureThreadsConfigured() {
  std::call_once(configured_once, [] {
    auto threads = ResolveThreads(std::nullopt, std::nullopt);
    (void)arrow::SetCpuThreadPoolCapacity(threads.ok() ? *threads : MachineCores());
  });
}

int ThreadCount() {
  const int n = arrow::GetCpuThreadPoolCapacity();
  return n < 1 ? 1 : n;
}

bool PreferSerialUnits(size_t files, size_t units_of_first_file, size_t columns) {
  EnsureThreadsConfigured();
  if (ThreadCount() <= 1 || OnPoolThread() || files == 0) return true;
  const auto enough = static_cast<size_t>(2 * ThreadCount());
  // Wide reads stream with their columns decoded in parallel: a unit holds a whole row group until
  // it is consumed, which measured (docs/benchmarks.md) ~30% more CPU on 2 threads than streaming
  // (fresh pages, cache misses) for the Delta feed of 6 columns and a scan of 8.
  return columns >= enough || (files == 1 && units_of_first_file <= 1);
}

bool OnPoolThread() { return arrow::internal::GetCpuThreadPool()->OwnsThisThread(); }

bool ColumnThreads(bool wanted) {
  if (!wanted) return false;
  EnsureThreadsConfigured();
  return ThreadCount() > 1 && !OnPoolThread();
}

}  // namespace lakesync
