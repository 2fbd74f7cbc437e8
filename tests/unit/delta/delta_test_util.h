// Helpers for the Delta unit tests: status macros and the shared corpus (Delta tables written by
// Spark, Databricks and delta-kernel-rs) extracted into a scratch directory.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "lakesync/common/status.h"
#include "temp_dir_test_util.h"

#define ASSERT_OK(expr)                      \
  do {                                       \
    auto _st = (expr);                       \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                                      \
  auto LS_CONCAT(_r_, __LINE__) = (rexpr);                                                     \
  ASSERT_TRUE(LS_CONCAT(_r_, __LINE__).ok()) << LS_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = std::move(LS_CONCAT(_r_, __LINE__)).ValueUnsafe()

namespace lakesync::delta::testing {

// A fresh, empty folder for this process, removed when it exits.
inline std::string ScratchDir(const std::string& name) {
  const auto dir = lakesync::testing::ProcessTempDir("lakesync-delta-unit-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Extracts delta-cdf/<archive>.tar.zst and returns the extracted top-level folder.
inline std::string ExtractCorpus(const std::string& archive) {
  const std::string dir = ScratchDir(archive);
  const std::string cmd = "tar --zstd -xf " LAKESYNC_SHARED_DIR "/corpora/delta-cdf/" + archive + ".tar.zst -C " + dir;
  if (std::system(cmd.c_str()) != 0) return "";
  return dir + "/" + archive;
}

}  // namespace lakesync::delta::testing
