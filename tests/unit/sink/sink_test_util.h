// Shared helpers for the sink unit tests: status assertions and a check that an error names what it
// must (the key, the file).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lakesync/common/status.h"

#define ASSERT_OK(expr)                      \
  do {                                       \
    auto _st = (expr);                       \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                                       \
  auto LS_CONCAT(_r_, __LINE__) = (rexpr);                                                     \
  ASSERT_TRUE(LS_CONCAT(_r_, __LINE__).ok()) << LS_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = std::move(LS_CONCAT(_r_, __LINE__)).ValueUnsafe()

namespace lakesync::sink::testing {

inline Status StatusOf(const Status& status) { return status; }
template <typename T>
Status StatusOf(const Result<T>& result) {
  return result.status();
}

// Expects `result` to fail with `kind` and a message containing every needle.
template <typename R>
void ExpectFailure(const R& result, ErrorKind kind, const std::vector<std::string>& needles,
                   const std::string& what = "") {
  const Status status = StatusOf(result);
  ASSERT_FALSE(status.ok()) << "expected an error for: " << what;
  EXPECT_EQ(KindOf(status), kind) << status.ToString();
  for (const auto& needle : needles) {
    EXPECT_NE(status.message().find(needle), std::string::npos)
        << "'" << needle << "' not in: " << status.message() << "  (input: " << what << ")";
  }
}

}  // namespace lakesync::sink::testing
