// Helpers shared by the iceberg_model unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lakesync/common/status.h"

#define LS_MODEL_TEST_CONCAT_INNER(a, b) a##b
#define LS_MODEL_TEST_CONCAT(a, b) LS_MODEL_TEST_CONCAT_INNER(a, b)
#define LS_MODEL_ASSERT_OK_AND_ASSIGN_IMPL(res, lhs, rexpr)          \
  auto res = (rexpr);                                                \
  ASSERT_TRUE(res.ok()) << #rexpr << ": " << res.status().ToString(); \
  lhs = std::move(res).ValueUnsafe();
// Asserts that a Result is OK and moves its value into lhs.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  LS_MODEL_ASSERT_OK_AND_ASSIGN_IMPL(LS_MODEL_TEST_CONCAT(_ls_test_res_, __COUNTER__), lhs, rexpr)
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    ::lakesync::Status _ls_test_st = (expr);                                   \
    ASSERT_TRUE(_ls_test_st.ok()) << #expr << ": " << _ls_test_st.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    ::lakesync::Status _ls_test_st = (expr);                                   \
    EXPECT_TRUE(_ls_test_st.ok()) << #expr << ": " << _ls_test_st.ToString(); \
  } while (0)

// Asserts that a Status or Result failed with `kind` and that its message contains `needle`.
#define EXPECT_ERROR(expr, kind, needle)                                                      \
  do {                                                                                        \
    const ::lakesync::Status _ls_test_st = ::lakesync::iceberg::testing::StatusOf((expr));    \
    EXPECT_FALSE(_ls_test_st.ok()) << #expr << " unexpectedly succeeded";                     \
    EXPECT_EQ(::lakesync::KindOf(_ls_test_st), (kind)) << #expr << ": " << _ls_test_st.ToString(); \
    EXPECT_NE(_ls_test_st.message().find(needle), std::string::npos)                          \
        << #expr << ": '" << _ls_test_st.message() << "' does not mention '" << (needle) << "'"; \
  } while (0)

namespace lakesync::iceberg::testing {

inline Status StatusOf(const Status& st) { return st; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

// Bytes from a hex string ("00ff10"), for expectations written in hex.
inline std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

}  // namespace lakesync::iceberg::testing
