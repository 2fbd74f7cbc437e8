#pragma once
// Integer rules the engine needs in several modules (timestamps to days and hours for transforms,
// statistics and literals), written once.

#include <cstdint>

namespace lakesync {

// a / b rounded toward negative infinity (C++ division truncates toward zero): day -1 is
// 1969-12-31, so a timestamp one microsecond before the epoch must fall into it, not into day 0.
inline constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

}  // namespace lakesync
