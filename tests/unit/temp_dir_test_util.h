// Temporary folders that a test process removes when it exits. ctest runs every test case in its own
// process, so helpers that name a folder after the process id (and let later cases of the same binary
// reuse it) would otherwise leave one folder per case behind in the system's temporary folder.
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <system_error>

namespace lakesync::testing {

// Creates <system temp>/<name> (emptied if it is left from an earlier process) and removes it when
// the process exits normally. A test that crashes leaves its folder for inspection.
inline std::filesystem::path ProcessTempDir(const std::string& name) {
  struct Registry {
    std::mutex mutex;
    std::set<std::filesystem::path> dirs;
    ~Registry() {
      for (const auto& dir : dirs) {
        std::error_code ignored;  // nothing to report to at exit; a leftover folder is harmless
        std::filesystem::remove_all(dir, ignored);
      }
    }
  };
  static Registry registry;
  const auto dir = std::filesystem::temp_directory_path() / name;
  std::lock_guard lock(registry.mutex);
  if (registry.dirs.insert(dir).second) std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace lakesync::testing
