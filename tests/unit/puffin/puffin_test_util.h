// Helpers shared by the puffin unit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/positions_bitmap.h"

#define LS_TEST_CONCAT_INNER(a, b) a##b
#define LS_TEST_CONCAT(a, b) LS_TEST_CONCAT_INNER(a, b)
#define LS_ASSERT_OK_AND_ASSIGN_IMPL(res, lhs, rexpr)             \
  auto res = (rexpr);                                            \
  ASSERT_TRUE(res.ok()) << #rexpr << ": " << res.status().ToString(); \
  lhs = std::move(res).ValueUnsafe();
// Asserts that a Result is OK and moves its value into lhs.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  LS_ASSERT_OK_AND_ASSIGN_IMPL(LS_TEST_CONCAT(_ls_test_res_, __COUNTER__), lhs, rexpr)
#define ASSERT_OK(expr)                                         \
  do {                                                          \
    ::lakesync::Status _ls_test_st = (expr);                    \
    ASSERT_TRUE(_ls_test_st.ok()) << #expr << ": " << _ls_test_st.ToString(); \
  } while (0)

namespace lakesync::puffin::testing {

inline std::string CorpusPath(const std::string& name) {
  return std::string(LAKESYNC_SHARED_DIR) + "/corpora/iceberg-vectors/" + name;
}

inline std::string ReadCorpus(const std::string& name) {
  std::ifstream in(CorpusPath(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << CorpusPath(name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline PositionBitmap FromSet(const std::set<int64_t>& positions) {
  PositionBitmap bitmap;
  for (int64_t p : positions) EXPECT_TRUE(bitmap.Add(p).ok());
  return bitmap;
}

inline std::vector<int64_t> ToVector(const std::set<int64_t>& positions) {
  return {positions.begin(), positions.end()};
}

// Random position sets of the shapes deletion vectors take in practice and at the edges of the
// 32-bit halves: a few scattered rows, dense runs, values spread over many keys, and values near
// 2^31 and 2^32 where signed/unsigned mistakes show.
enum class Shape { kSmall, kDense, kSparse, kAround2to31, kAround2to32, kManyKeys, kMixed };

inline std::set<int64_t> RandomPositions(std::mt19937_64& rng, Shape shape) {
  std::set<int64_t> out;
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  switch (shape) {
    case Shape::kSmall:
      for (int i = 0, n = static_cast<int>(uniform(1, 20)); i < n; ++i) out.insert(uniform(0, 1000));
      break;
    case Shape::kDense: {
      const int64_t start = uniform(0, 1 << 20);
      const int64_t len = uniform(1, 200000);
      for (int64_t p = start; p < start + len; ++p) {
        if (uniform(0, 99) < 90) out.insert(p);
      }
      break;
    }
    case Shape::kSparse:
      for (int i = 0; i < 3000; ++i) out.insert(uniform(0, int64_t{1} << 31));
      break;
    case Shape::kAround2to31:
      for (int i = 0; i < 2000; ++i) out.insert((int64_t{1} << 31) + uniform(-70000, 70000));
      break;
    case Shape::kAround2to32:
      for (int i = 0; i < 2000; ++i) out.insert((int64_t{1} << 32) + uniform(-70000, 70000));
      break;
    case Shape::kManyKeys:
      for (int i = 0; i < 500; ++i) out.insert((uniform(0, 40) << 32) | uniform(0, UINT32_MAX));
      break;
    case Shape::kMixed: {
      for (int i = 0; i < 100; ++i) out.insert(uniform(0, 100000));
      const int64_t run = uniform(0, int64_t{3} << 32);
      for (int64_t p = run; p < run + 70000; ++p) out.insert(p);
      for (int i = 0; i < 10; ++i) out.insert((int64_t{1000} << 32) + uniform(0, 1000));
      break;
    }
  }
  return out;
}

inline const std::vector<Shape>& AllShapes() {
  static const std::vector<Shape> shapes = {Shape::kSmall,       Shape::kDense,    Shape::kSparse, Shape::kAround2to31,
                                            Shape::kAround2to32, Shape::kManyKeys, Shape::kMixed};
  return shapes;
}

}  // namespace lakesync::puffin::testing
