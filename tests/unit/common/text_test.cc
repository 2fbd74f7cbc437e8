// common/text.h and common/arithmetic.h: the small rules that used to be written once per module.
#include <gtest/gtest.h>

#include <string>

#include "lakesync/common/arithmetic.h"
#include "lakesync/common/text.h"

namespace lakesync {
namespace {

TEST(AsciiLower, LowersAsciiLettersOnlyAndKeepsOtherBytes) {
  EXPECT_EQ(AsciiLower("ZSTD"), "zstd");
  EXPECT_EQ(AsciiLower("Write.Format-Default_2"), "write.format-default_2");
  EXPECT_EQ(AsciiLower(""), "");
  // Multi-byte UTF-8 (É is C3 89) passes through byte for byte, whatever the locale.
  EXPECT_EQ(AsciiLower("\xc3\x89T\xc3\xa9"), "\xc3\x89t\xc3\xa9");
  EXPECT_EQ(AsciiLower("@[`{"), "@[`{");  // the neighbours of A-Z and a-z are not letters
}

TEST(TrimSpace, DropsAsciiWhiteSpaceAtBothEndsOnly) {
  EXPECT_EQ(TrimSpace("  a b \t\r\n"), "a b");
  EXPECT_EQ(TrimSpace("\v\fx"), "x");
  EXPECT_EQ(TrimSpace("x"), "x");
  EXPECT_EQ(TrimSpace(""), "");
  EXPECT_EQ(TrimSpace(" \t\n"), "");
  EXPECT_EQ(TrimSpace("\xc2\xa0x\xc2\xa0"), "\xc2\xa0x\xc2\xa0");  // U+00A0 is not ASCII white space
}

TEST(FloorDiv, RoundsTowardNegativeInfinity) {
  EXPECT_EQ(FloorDiv(7, 2), 3);
  EXPECT_EQ(FloorDiv(-7, 2), -4);
  EXPECT_EQ(FloorDiv(7, -2), -4);
  EXPECT_EQ(FloorDiv(-7, -2), 3);
  EXPECT_EQ(FloorDiv(-6, 2), -3);
  EXPECT_EQ(FloorDiv(0, 5), 0);
  // One microsecond before the epoch is day -1 (1969-12-31).
  EXPECT_EQ(FloorDiv(-1, int64_t{86400} * 1000000), -1);
  static_assert(FloorDiv(-1, 3) == -1);
}

}  // namespace
}  // namespace lakesync
