// GoogleTest assertions for lakesync::Status and Result<T>, for every unit test directory (include
// as "status_test_util.h"; tests/CMakeLists.txt puts tests/unit on the include path).
#pragma once

#include <gtest/gtest.h>

#include "lakesync/common/status.h"

#ifndef ASSERT_OK
#define ASSERT_OK(expr)                      \
  do {                                       \
    auto _st = (expr);                       \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)
#endif
#ifndef EXPECT_OK
#define EXPECT_OK(expr)                      \
  do {                                       \
    auto _st = (expr);                       \
    EXPECT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)
#endif
#ifndef ASSERT_OK_AND_ASSIGN
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                                       \
  auto LS_CONCAT(_r_, __LINE__) = (rexpr);                                                     \
  ASSERT_TRUE(LS_CONCAT(_r_, __LINE__).ok()) << LS_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = std::move(LS_CONCAT(_r_, __LINE__)).ValueUnsafe()
#endif

namespace lakesync {

// The value of a Result, or a test failure naming its status (and a default value) when it has none:
// for set-up code that runs outside a function returning void.
template <typename T>
T ValueOrFail(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).ValueOrDie();
}

}  // namespace lakesync
