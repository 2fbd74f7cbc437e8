// The regex-free date/time/timestamp parsers of the readers must agree with the general parsers of
// iceberg/model/literal.h wherever they accept a text, and must accept what the writers produce.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lakesync/formats/tabular/value_converters_internal.h"
#include "lakesync/iceberg/model/literal.h"

namespace lakesync::tabular {
namespace {

class TextGenerator {
 public:
  explicit TextGenerator(uint64_t seed) : rng_(seed) {}

  // Mostly well-formed pieces, with digits out of range and wrong separators now and then.
  std::string Date() {
    return Num(4, OneIn(20) ? 99999 : 9999) + Sep('-') + Num(2, OneIn(10) ? 99 : 13) + Sep('-') +
           Num(2, OneIn(10) ? 99 : 32);
  }
  std::string Time(int max_fraction) {
    std::string t = Num(2, OneIn(10) ? 99 : 24) + Sep(':') + Num(2, OneIn(10) ? 99 : 60) + Sep(':') +
                    Num(2, OneIn(10) ? 99 : 61);
    if (OneIn(2)) {
      t += Sep('.');
      const int n = static_cast<int>(Between(0, max_fraction + 1));
      for (int i = 0; i < n; ++i) t.push_back(static_cast<char>('0' + Between(0, 9)));
    }
    return t;
  }
  std::string Timestamp(int max_fraction) {
    std::string ts = Date() + (OneIn(2) ? "T" : OneIn(2) ? " " : "t") + Time(max_fraction);
    switch (Between(0, 5)) {
      case 0: ts += "Z"; break;
      case 1: ts += "+" + Num(2, 24) + ":" + Num(2, 60); break;
      case 2: ts += "-" + Num(2, 24) + ":" + Num(2, 60); break;
      case 3: ts += "+" + Num(2, 24) + Num(2, 60); break;
      default: break;
    }
    return ts;
  }

 private:
  int64_t Between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool OneIn(int n) { return Between(0, n - 1) == 0; }
  std::string Num(int width, int64_t max) {
    std::string s = std::to_string(Between(0, max));
    if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<size_t>(width) - s.size(), '0');
    return s;
  }
  std::string Sep(char c) { return OneIn(30) ? std::string(1, "x/_:-."[Between(0, 5)]) : std::string(1, c); }

  std::mt19937_64 rng_;
};

TEST(FastParseTest, AgreesWithTheGeneralParsersWhereverItAccepts) {
  TextGenerator gen(42);
  int dates = 0, times = 0, timestamps = 0;
  for (int i = 0; i < 100000; ++i) {
    const std::string d = gen.Date();
    int32_t days;
    if (ParseDateFast(d, &days)) {
      ++dates;
      auto general = iceberg::ParseDate(d);
      ASSERT_TRUE(general.ok()) << d;
      ASSERT_EQ(*general, days) << d;
    }
    const std::string t = gen.Time(9);
    int64_t micros;
    if (ParseTimeFast(t, &micros)) {
      ++times;
      auto general = iceberg::ParseTime(t);
      ASSERT_TRUE(general.ok()) << t;
      ASSERT_EQ(*general, micros) << t;
    }
    for (bool nanos : {false, true}) {
      const std::string ts = gen.Timestamp(nanos ? 10 : 7);
      int64_t value;
      if (ParseTimestampFast(ts, nanos, &value)) {
        ++timestamps;
        auto general = iceberg::ParseTimestamp(ts, nanos);
        ASSERT_TRUE(general.ok()) << ts;
        ASSERT_EQ(*general, value) << ts;
      }
    }
  }
  // The generator is mostly well-formed: the fast paths must have been taken often.
  EXPECT_GT(dates, 30000);
  EXPECT_GT(times, 30000);
  EXPECT_GT(timestamps, 30000);
}

TEST(FastParseTest, TakesTheWritersSpellings) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    // Years 1000-9999: four digits, the spelling FormatDate uses without a sign.
    const int32_t day = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(-354285, 2932896)(rng));
    int32_t days;
    ASSERT_TRUE(ParseDateFast(iceberg::FormatDate(day), &days)) << iceberg::FormatDate(day);
    EXPECT_EQ(days, day);
    const int64_t micros = std::uniform_int_distribution<int64_t>(-30610224000000000LL, 253402300799999999LL)(rng);
    int64_t value;
    const std::string text = iceberg::FormatTimestamp(micros, false, false) + (i % 2 ? "Z" : "");
    ASSERT_TRUE(ParseTimestampFast(text, false, &value)) << text;
    EXPECT_EQ(value, micros) << text;
    const int64_t tod = std::uniform_int_distribution<int64_t>(0, 86400LL * 1000000 - 1)(rng);
    ASSERT_TRUE(ParseTimeFast(iceberg::FormatTime(tod), &value)) << iceberg::FormatTime(tod);
    EXPECT_EQ(value, tod);
  }
}

}  // namespace
}  // namespace lakesync::tabular
