// The one key encoder (equality deletes, key resolution, grouping by key, changelog hashes): which
// values are equal follows the spec's equality-delete rules, whatever Arrow layout holds them.
#include "lakesync/iceberg/model/key_columns.h"

#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/extension/uuid.h>
#include <arrow/json/from_string.h>

#include <cmath>
#include <limits>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

std::shared_ptr<arrow::Array> Json(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto array = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return *array;
}

KeyColumns Keys(std::vector<std::shared_ptr<arrow::Array>> columns) {
  auto keys = KeyColumns::Make(std::move(columns));
  EXPECT_TRUE(keys.ok()) << keys.status().ToString();
  return std::move(keys).ValueOrDie();
}

std::string Encoded(const KeyColumns& keys, int64_t row) {
  std::string out;
  keys.AppendKey(row, out);
  return out;
}

TEST(KeyColumns, NullsEqualNullsAndDifferFromValues) {
  auto keys = Keys({Json(arrow::int64(), "[1, null, 1, null, 0]")});
  EXPECT_TRUE(keys.Equal(1, 3));
  EXPECT_TRUE(keys.Equal(0, 2));
  EXPECT_FALSE(keys.Equal(0, 1));
  EXPECT_FALSE(keys.Equal(1, 4));  // null is not zero
  EXPECT_EQ(Encoded(keys, 1), Encoded(keys, 3));
  EXPECT_NE(Encoded(keys, 1), Encoded(keys, 4));
  const auto hashes = keys.HashRows(7);
  EXPECT_EQ(hashes[1], hashes[3]);
  EXPECT_EQ(hashes[0], hashes[2]);
  EXPECT_NE(hashes[1], hashes[4]);
}

TEST(KeyColumns, FloatsCompareByBitsWithOneNaN) {
  const double nan1 = std::numeric_limits<double>::quiet_NaN();
  const double nan2 = -std::nan("0x5");  // another NaN payload and sign
  arrow::DoubleBuilder b;
  ASSERT_TRUE(b.AppendValues({nan1, nan2, 0.0, -0.0, 1.5}).ok());
  auto keys = Keys({*b.Finish()});
  EXPECT_TRUE(keys.Equal(0, 1));
  EXPECT_EQ(keys.Word(0), keys.Word(1));
  EXPECT_FALSE(keys.Equal(2, 3));  // -0.0 and 0.0 differ, as in Java's comparators
  KeySet set;
  set.Insert(keys);
  EXPECT_EQ(set.size(), 4u);
}

TEST(KeyColumns, StringsMatchAcrossArrowLayouts) {
  auto small = Keys({Json(arrow::utf8(), R"(["a", "bc", null, ""])")});
  auto large = Keys({Json(arrow::large_utf8(), R"(["bc", "a", "", null])")});
  auto view = Keys({Json(arrow::utf8_view(), R"(["", "a", "bc", null])")});
  KeySet set;
  set.Insert(small);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(set.Contains(large, i)) << i;
    EXPECT_TRUE(set.Contains(view, i)) << i;
  }
  EXPECT_EQ(Encoded(small, 0), Encoded(large, 1));
  EXPECT_EQ(Encoded(small, 1), Encoded(view, 2));
  // "" and null are different keys.
  EXPECT_NE(Encoded(small, 2), Encoded(small, 3));
}

TEST(KeyColumns, UuidExtensionComparesByStorage) {
  auto storage = Json(arrow::fixed_size_binary(16), R"(["0123456789abcdef", "fedcba9876543210"])");
  auto uuid = arrow::ExtensionType::WrapArray(arrow::extension::uuid(), storage);
  auto a = Keys({storage});
  auto b = Keys({uuid});
  EXPECT_EQ(Encoded(a, 0), Encoded(b, 0));
  EXPECT_EQ(a.HashRows(1), b.HashRows(1));
  KeySet set;
  set.Insert(a);
  EXPECT_TRUE(set.Contains(b, 1));
}

TEST(KeyColumns, SeveralColumnsAndSlices) {
  auto ids = Json(arrow::int32(), "[1, 1, 2, 1]");
  auto names = Json(arrow::utf8(), R"(["x", "y", "x", "x"])");
  auto keys = Keys({ids, names});
  EXPECT_FALSE(keys.single_word());
  EXPECT_TRUE(keys.Equal(0, 3));
  EXPECT_FALSE(keys.Equal(0, 1));
  EXPECT_FALSE(keys.Equal(0, 2));
  // A slice keeps its values: row 0 of the slice is row 1 of the arrays.
  auto sliced = Keys({ids->Slice(1), names->Slice(1)});
  EXPECT_EQ(Encoded(sliced, 0), Encoded(keys, 1));
  EXPECT_EQ(Encoded(sliced, 2), Encoded(keys, 3));
  std::vector<Hash128> whole, part;
  keys.HashRows128(whole);
  sliced.HashRows128(part);
  EXPECT_EQ(whole[3], part[2]);
  EXPECT_FALSE(whole[0] == whole[1]);
  // Columns of different lengths are refused.
  EXPECT_FALSE(KeyColumns::Make({ids, names->Slice(1)}).ok());
}

TEST(KeySet, WordKeysAndEncodedKeysMergeAndProbe) {
  auto first = Keys({Json(arrow::int64(), "[1, 2, null]")});
  auto second = Keys({Json(arrow::int64(), "[2, 3]")});
  KeySet a, b;
  a.Insert(first);
  b.Insert(second);
  a.Merge(b);
  EXPECT_EQ(a.size(), 4u);  // 1, 2, 3 and null
  auto probe = Keys({Json(arrow::int64(), "[3, 4, null]")});
  EXPECT_TRUE(a.Contains(probe, 0));
  EXPECT_FALSE(a.Contains(probe, 1));
  EXPECT_TRUE(a.Contains(probe, 2));

  auto decimals = Keys({Json(arrow::decimal128(20, 2), R"(["1.50", "2.00"])")});
  EXPECT_FALSE(decimals.single_word());  // 16 bytes: encoded
  KeySet d;
  d.Insert(decimals, 1);
  EXPECT_EQ(d.size(), 1u);
  EXPECT_TRUE(d.Contains(decimals, 1));
  EXPECT_FALSE(d.Contains(decimals, 0));
}

TEST(KeyColumns, NestedValuesCompareByValue) {
  auto type = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8())});
  auto keys = Keys({Json(type, R"([{"a": 1, "b": "x"}, {"a": 1, "b": "x"}, {"a": 1, "b": null}, null])")});
  EXPECT_TRUE(keys.Equal(0, 1));
  EXPECT_FALSE(keys.Equal(0, 2));
  EXPECT_FALSE(keys.Equal(2, 3));
  std::vector<Hash128> hashes;
  keys.HashRows128(hashes);
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_FALSE(hashes[0] == hashes[2]);
}

}  // namespace
}  // namespace lakesync::iceberg
