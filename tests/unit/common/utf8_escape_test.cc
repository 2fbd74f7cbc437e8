// EscapeInvalidUtf8: what every error and log line goes through on its way out of the process.
#include <gtest/gtest.h>

#include <string>

#include "lakesync/common/status.h"
#include "lakesync/common/utf8.h"

namespace lakesync {
namespace {

TEST(EscapeInvalidUtf8, ValidTextIsUnchanged) {
  EXPECT_EQ(EscapeInvalidUtf8(""), "");
  EXPECT_EQ(EscapeInvalidUtf8("plain ascii path/x.parquet"), "plain ascii path/x.parquet");
  // Two-, three- and four-byte sequences: é, €, 😀.
  const std::string mixed = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  EXPECT_EQ(EscapeInvalidUtf8(mixed), mixed);
}

TEST(EscapeInvalidUtf8, BadBytesAreShownAndGoodOnesKept) {
  // A continuation byte without a lead (the CI case: a bit flip in a file name).
  EXPECT_EQ(EscapeInvalidUtf8("x.pa\x8aruet"), "x.pa\\x8aruet");
  // A lead byte whose sequence is cut short by the end of the text, and by an ASCII byte.
  EXPECT_EQ(EscapeInvalidUtf8("end \xe2\x82"), "end \\xe2\\x82");
  EXPECT_EQ(EscapeInvalidUtf8("\xc3(ok"), "\\xc3(ok");
  // Bytes that never start a sequence, an overlong encoding of '/', and a UTF-16 surrogate.
  EXPECT_EQ(EscapeInvalidUtf8("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EscapeInvalidUtf8("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(EscapeInvalidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // A valid sequence right after a bad byte survives whole.
  EXPECT_EQ(EscapeInvalidUtf8("\x8a\xc3\xa9"), "\\x8a\xc3\xa9");
}

TEST(EscapeInvalidUtf8, OutputIsAlwaysValidAndStable) {
  // Every single byte value alone and after a lead byte: the result is valid UTF-8, and escaping it
  // again changes nothing (ReportError escapes before the JSON log formatter does).
  for (int a = 0; a < 256; ++a) {
    for (const int lead : {-1, 0xc3, 0xe2, 0xf0}) {
      std::string text;
      if (lead >= 0) text.push_back(static_cast<char>(lead));
      text.push_back(static_cast<char>(a));
      const std::string once = EscapeInvalidUtf8(text);
      EXPECT_EQ(EscapeInvalidUtf8(once), once) << "byte " << a << " after " << lead;
    }
  }
}

// IsValidUtf8 (common/utf8.h): the one check behind EscapeInvalidUtf8, the YAML/JSON reader and the
// CSV reader. It must work as the first Arrow UTF-8 call of a process (no other component set Arrow's
// tables up first), which this test binary's fresh start exercises when run alone.
TEST(IsValidUtf8, AcceptsWellFormedAndRejectsEachKindOfBadSequence) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("x\x8a"));              // continuation byte without a lead
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));           // truncated sequence
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));           // overlong form
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));       // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));   // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8(std::string_view("a\xff", 2)));
}

}  // namespace
}  // namespace lakesync
