#include "lakesync/common/failpoint.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace lakesync {
namespace detail {

std::atomic<bool> g_failpoints_armed{false};

namespace {

struct Armed {
  enum class Action { kCount, kAlways, kKill, kWait } action = Action::kCount;
  long remaining = 0;  // kCount, kWait: how many more times it fires
  std::string path;    // kWait: the release file
};

std::mutex& Mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Armed, std::less<>>& Points() {
  static std::map<std::string, Armed, std::less<>> points;
  return points;
}

Result<std::map<std::string, Armed, std::less<>>> Parse(std::string_view spec) {
  std::map<std::string, Armed, std::less<>> out;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return InvalidArgument("failpoint '{}': expected NAME=N, NAME=always, NAME=kill or NAME=wait:PATH", item);
    }
    const std::string_view name = item.substr(0, eq), action = item.substr(eq + 1);
    Armed armed;
    if (action == "always") {
      armed.action = Armed::Action::kAlways;
    } else if (action == "kill") {
      armed.action = Armed::Action::kKill;
    } else if (action.substr(0, 5) == "wait:" && action.size() > 5) {
      armed.action = Armed::Action::kWait;
      armed.remaining = 1;
      armed.path = std::string(action.substr(5));
    } else {
      const std::string text(action);
      char* end = nullptr;
      armed.remaining = std::strtol(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || armed.remaining < 1) {
        return InvalidArgument("failpoint '{}': the action must be a count >= 1, always, kill or wait:PATH", item);
      }
    }
    out[std::string(name)] = armed;
  }
  return out;
}

[[noreturn]] void Kill(std::string_view name) {
  std::fprintf(stderr, "lakesync: failpoint %s reached: killing the process\n", std::string(name).c_str());
  std::fflush(stderr);
  std::raise(SIGKILL);
  std::abort();  // not reached
}

// Reads the environment before main(): the flag is set before any thread can reach a point.
const bool kArmedFromEnvironment = [] {
  auto& points = Points();
  if (const char* spec = std::getenv("LAKESYNC_FAILPOINTS"); spec != nullptr && *spec != '\0') {
    auto parsed = Parse(spec);
    if (!parsed.ok()) {
      // A test that arms a point it misspelled must not pass without the failure it meant to cause.
      std::fprintf(stderr, "lakesync: LAKESYNC_FAILPOINTS: %s\n", parsed.status().message().c_str());
      std::exit(2);
    }
    points = std::move(*parsed);
  }
  if (const char* kill = std::getenv("LAKESYNC_FAILPOINT"); kill != nullptr && *kill != '\0') {
    points[kill] = Armed{Armed::Action::kKill, 0};
  }
  g_failpoints_armed.store(!points.empty(), std::memory_order_relaxed);
  return true;
}();

// Announces that this process reached the point, then waits for the test to release it. Polling a
// file is the simplest signal between processes that a test can drive; the deadline keeps a test
// that never releases from hanging the process.
void WaitForRelease(std::string_view name, const std::string& path) {
  const std::string reached = path + ".reached." + std::to_string(::getpid());
  if (std::FILE* f = std::fopen(reached.c_str(), "w")) std::fclose(f);
  std::fprintf(stderr, "lakesync: failpoint %s reached: waiting for %s\n", std::string(name).c_str(), path.c_str());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (::access(path.c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

bool FailpointFiresSlow(std::string_view name) {
  std::unique_lock lock(Mutex());
  auto& points = Points();
  auto it = points.find(name);
  if (it == points.end()) return false;
  switch (it->second.action) {
    case Armed::Action::kKill: Kill(name);
    case Armed::Action::kWait: {
      if (it->second.remaining == 0) return false;
      --it->second.remaining;
      const std::string path = it->second.path;
      lock.unlock();
      WaitForRelease(name, path);
      return false;  // nothing to inject: the pause was the point
    }
    case Armed::Action::kAlways: break;
    case Armed::Action::kCount:
      if (it->second.remaining == 0) return false;
      --it->second.remaining;
      break;
  }
  std::fprintf(stderr, "lakesync: failpoint %s fired\n", std::string(name).c_str());
  return true;
}

}  // namespace detail

Status SetFailpoints(std::string_view spec) {
  auto parsed = detail::Parse(spec);
  if (!parsed.ok()) return parsed.status();
  std::lock_guard lock(detail::Mutex());
  detail::Points() = std::move(*parsed);
  detail::g_failpoints_armed.store(!detail::Points().empty(), std::memory_order_relaxed);
  return Status::OK();
}

}  // namespace lakesync
