#include "lakesync/iceberg/model/spec_syntax.h"

#include <gtest/gtest.h>

#include "model_test_util.h"

namespace lakesync::iceberg {
namespace {

NestedField F(int32_t id, std::string name, bool required, TypePtr type) {
  NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.required = required;
  f.type = std::move(type);
  return f;
}

Schema TestSchema() {
  return Schema(0, {F(1, "id", true, Type::Long()), F(2, "ts", false, Type::TimestampTz()),
                    F(3, "name", false, Type::String()), F(4, "d", false, Type::Date()),
                    F(5, "loc", false, Type::Struct({F(6, "city", false, Type::String())})),
                    F(7, "score", false, Type::Double())});
}

TEST(SpecSyntaxTest, PartitionTermsBecomeFieldsWithJavaNames) {
  ASSERT_OK_AND_ASSIGN(auto spec, ParsePartitionFields({"id", "bucket(id, 16)", "truncate(name, 4)", "year(ts)",
                                                        "month(d)", "day(ts)", "hour(ts)", "identity(name)",
                                                        "void(score)", "bucket(loc.city, 8)"},
                                                       TestSchema()));
  EXPECT_EQ(spec->spec_id(), 0);
  const std::vector<std::tuple<std::string, std::string, int32_t>> expected = {
      {"id", "identity", 1},          {"id_bucket", "bucket[16]", 1}, {"name_trunc", "truncate[4]", 3},
      {"ts_year", "year", 2},         {"d_month", "month", 4},        {"ts_day", "day", 2},
      {"ts_hour", "hour", 2},         {"name", "identity", 3},        {"score_null", "void", 7},
      {"loc_city_bucket", "bucket[8]", 6}};
  ASSERT_EQ(spec->fields().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& f = spec->fields()[i];
    EXPECT_EQ(f.name, std::get<0>(expected[i]));
    EXPECT_EQ(f.transform.ToString(), std::get<1>(expected[i]));
    EXPECT_EQ(f.source_id, std::get<2>(expected[i]));
    EXPECT_EQ(f.field_id, 1000 + static_cast<int32_t>(i));
  }
}

TEST(SpecSyntaxTest, AlternativeSpellings) {
  ASSERT_OK_AND_ASSIGN(auto spec, ParsePartitionFields({" BUCKET ( id , 4 ) ", "bucket[2](name)", "days(ts)",
                                                        "Truncate[3](name)", "months(d)", "years(d)", "hours(ts)"},
                                                       TestSchema()));
  ASSERT_EQ(spec->fields().size(), 7u);
  EXPECT_EQ(spec->fields()[0].transform, Transform::Bucket(4));
  EXPECT_EQ(spec->fields()[1].transform, Transform::Bucket(2));
  EXPECT_EQ(spec->fields()[2].transform.kind(), Transform::Kind::kDay);
  EXPECT_EQ(spec->fields()[3].transform, Transform::Truncate(3));
  EXPECT_EQ(spec->fields()[6].transform.kind(), Transform::Kind::kHour);
}

TEST(SpecSyntaxTest, BadPartitionTermsNameTheTerm) {
  const Schema s = TestSchema();
  EXPECT_ERROR(ParsePartitionFields({"nope"}, s), ErrorKind::kInvalidArgument, "'nope'");
  EXPECT_ERROR(ParsePartitionFields({"bucket(id)"}, s), ErrorKind::kInvalidArgument, "needs a width");
  EXPECT_ERROR(ParsePartitionFields({"day(ts, 3)"}, s), ErrorKind::kInvalidArgument, "takes no width");
  EXPECT_ERROR(ParsePartitionFields({"bucket(id, 0)"}, s), ErrorKind::kInvalidArgument, "bucket(id, 0)");
  EXPECT_ERROR(ParsePartitionFields({"bucket(id, 99999999999999999999)"}, s), ErrorKind::kInvalidArgument,
               "99999999999999999999");
  EXPECT_ERROR(ParsePartitionFields({"zorder(id)"}, s), ErrorKind::kInvalidArgument, "'zorder'");
  EXPECT_ERROR(ParsePartitionFields({"hour(d)"}, s), ErrorKind::kInvalidArgument, "hour(d)");
  EXPECT_ERROR(ParsePartitionFields({"bucket(score, 4)"}, s), ErrorKind::kInvalidArgument, "double");
  EXPECT_ERROR(ParsePartitionFields({"loc"}, s), ErrorKind::kInvalidArgument, "'loc'");
  EXPECT_ERROR(ParsePartitionFields({"id", "id"}, s), ErrorKind::kInvalidArgument, "twice");
  EXPECT_ERROR(ParsePartitionFields({"a b"}, s), ErrorKind::kInvalidArgument, "'a b'");
  EXPECT_ERROR(ParsePartitionFields({""}, s), ErrorKind::kInvalidArgument, "partition field");
}

TEST(SpecSyntaxTest, NoTermsIsUnpartitioned) {
  ASSERT_OK_AND_ASSIGN(auto spec, ParsePartitionFields({}, TestSchema()));
  EXPECT_TRUE(spec->fields().empty());
  EXPECT_EQ(spec->LastAssignedFieldId(), 999);
}

TEST(SpecSyntaxTest, SortTermsWithDirectionsAndNullOrders) {
  ASSERT_OK_AND_ASSIGN(auto order, ParseSortFields({"id", "name desc", "ts asc nulls last",
                                                    "bucket(id, 4) DESC NULLS FIRST", "day(ts) desc nulls last"},
                                                   TestSchema()));
  EXPECT_EQ(order->order_id, 1);
  ASSERT_EQ(order->fields.size(), 5u);
  // Defaults: asc → nulls first, desc → nulls last.
  EXPECT_EQ(order->fields[0].direction, SortDirection::kAsc);
  EXPECT_EQ(order->fields[0].null_order, NullOrder::kNullsFirst);
  EXPECT_EQ(order->fields[1].direction, SortDirection::kDesc);
  EXPECT_EQ(order->fields[1].null_order, NullOrder::kNullsLast);
  EXPECT_EQ(order->fields[1].source_id, 3);
  EXPECT_EQ(order->fields[2].direction, SortDirection::kAsc);
  EXPECT_EQ(order->fields[2].null_order, NullOrder::kNullsLast);
  EXPECT_EQ(order->fields[3].transform, Transform::Bucket(4));
  EXPECT_EQ(order->fields[3].direction, SortDirection::kDesc);
  EXPECT_EQ(order->fields[3].null_order, NullOrder::kNullsFirst);
  EXPECT_EQ(order->fields[4].transform.kind(), Transform::Kind::kDay);
  ASSERT_OK_AND_ASSIGN(auto unsorted, ParseSortFields({}, TestSchema()));
  EXPECT_EQ(unsorted->order_id, 0);
  EXPECT_TRUE(unsorted->IsUnsorted());
}

TEST(SpecSyntaxTest, BadSortTermsAreErrors) {
  EXPECT_ERROR(ParseSortFields({"desc"}, TestSchema()), ErrorKind::kInvalidArgument, "desc");
  EXPECT_ERROR(ParseSortFields({"nope asc"}, TestSchema()), ErrorKind::kInvalidArgument, "nope");
  EXPECT_ERROR(ParseSortFields({"loc"}, TestSchema()), ErrorKind::kInvalidArgument, "loc");
  EXPECT_ERROR(ParseSortFields({"id sideways"}, TestSchema()), ErrorKind::kInvalidArgument, "id sideways");
}

TEST(SpecSyntaxTest, SplitTopLevelCommas) {
  EXPECT_EQ(SplitTopLevelCommas("a, bucket(b, 4), c"), (std::vector<std::string>{"a", "bucket(b, 4)", "c"}));
  EXPECT_EQ(SplitTopLevelCommas(" bucket[4](x) ,, y "), (std::vector<std::string>{"bucket[4](x)", "y"}));
  EXPECT_TRUE(SplitTopLevelCommas("").empty());
  EXPECT_TRUE(SplitTopLevelCommas(" , ").empty());
}

}  // namespace
}  // namespace lakesync::iceberg
