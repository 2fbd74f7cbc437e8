// Helpers shared by the Avro unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lakesync/common/status.h"

#define LS_TEST_CONCAT_INNER(a, b) a##b
#define LS_TEST_CONCAT(a, b) LS_TEST_CONCAT_INNER(a, b)
#define LS_ASSERT_OK_AND_ASSIGN_IMPL(res, lhs, rexpr)                    \
  auto res = (rexpr);                                                   \
  ASSERT_TRUE(res.ok()) << #rexpr << ": " << res.status().ToString();   \
  lhs = std::move(res).ValueUnsafe();
// Asserts that a Result is OK and moves its value into lhs.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  LS_ASSERT_OK_AND_ASSIGN_IMPL(LS_TEST_CONCAT(_ls_test_res_, __COUNTER__), lhs, rexpr)
#define ASSERT_OK(expr)                                                         \
  do {                                                                          \
    ::lakesync::Status _ls_test_st = (expr);                                    \
    ASSERT_TRUE(_ls_test_st.ok()) << #expr << ": " << _ls_test_st.ToString();   \
  } while (0)
