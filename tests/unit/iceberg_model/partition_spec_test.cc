#include "lakesync/iceberg/model/partition_spec.h"

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
                    F(5, "amount", false, Type::Decimal(9, 2)), F(6, "f", false, Type::Float()),
                    F(7, "s", false, Type::Struct({F(8, "inner", false, Type::Int())}))});
}

PartitionField PF(int32_t source, int32_t id, std::string name, Transform t) {
  return PartitionField{source, id, std::move(name), std::move(t)};
}

TEST(PartitionSpecTest, UnpartitionedSpec) {
  auto spec = PartitionSpec::Unpartitioned();
  EXPECT_EQ(spec->spec_id(), 0);
  EXPECT_TRUE(spec->fields().empty());
  EXPECT_TRUE(spec->IsUnpartitioned());
  // last-partition-id of an unpartitioned table is 999 (one below the first partition field id).
  EXPECT_EQ(spec->LastAssignedFieldId(), 999);
  EXPECT_EQ(kPartitionDataIdStart, 1000);
  ASSERT_OK_AND_ASSIGN(auto type, spec->PartitionType(TestSchema()));
  EXPECT_EQ(type->id(), TypeId::kStruct);
  EXPECT_TRUE(type->fields().empty());
}

TEST(PartitionSpecTest, OnlyVoidFieldsIsUnpartitioned) {
  PartitionSpec spec(1, {PF(1, 1000, "id_null", Transform(Transform::Kind::kVoid))});
  EXPECT_TRUE(spec.IsUnpartitioned());
  PartitionSpec mixed(2, {PF(1, 1000, "id_null", Transform(Transform::Kind::kVoid)),
                          PF(2, 1001, "ts_day", Transform(Transform::Kind::kDay))});
  EXPECT_FALSE(mixed.IsUnpartitioned());
  EXPECT_EQ(mixed.LastAssignedFieldId(), 1001);
}

TEST(PartitionSpecTest, PartitionTypeUsesResultTypesAndFieldIds) {
  PartitionSpec spec(3, {PF(2, 1000, "ts_day", Transform(Transform::Kind::kDay)),
                         PF(1, 1001, "id_bucket", Transform::Bucket(16)),
                         PF(3, 1002, "name_trunc", Transform::Truncate(4)),
                         PF(2, 1003, "ts_hour", Transform(Transform::Kind::kHour)),
                         PF(5, 1004, "amount", Transform::Identity()),
                         PF(4, 1005, "d_year", Transform(Transform::Kind::kYear)),
                         PF(4, 1006, "d_null", Transform(Transform::Kind::kVoid))});
  ASSERT_OK(spec.Validate(TestSchema()));
  ASSERT_OK_AND_ASSIGN(auto type, spec.PartitionType(TestSchema()));
  ASSERT_EQ(type->fields().size(), 7u);
  const std::vector<std::tuple<int32_t, std::string, std::string>> expected = {
      {1000, "ts_day", "date"},      {1001, "id_bucket", "int"},       {1002, "name_trunc", "string"},
      {1003, "ts_hour", "int"},      {1004, "amount", "decimal(9, 2)"}, {1005, "d_year", "int"},
      {1006, "d_null", "date"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& f = type->fields()[i];
    EXPECT_EQ(f.id, std::get<0>(expected[i]));
    EXPECT_EQ(f.name, std::get<1>(expected[i]));
    EXPECT_EQ(f.type->ToString(), std::get<2>(expected[i]));
    EXPECT_FALSE(f.required) << "partition values may be null";
  }
  EXPECT_EQ(spec.LastAssignedFieldId(), 1006);
}

TEST(PartitionSpecTest, VoidFieldOfADroppedColumnStaysReadable) {
  PartitionSpec spec(1, {PF(99, 1000, "gone", Transform(Transform::Kind::kVoid))});
  ASSERT_OK_AND_ASSIGN(auto type, spec.PartitionType(TestSchema()));
  EXPECT_EQ(type->fields()[0].type->id(), TypeId::kUnknown);
  PartitionSpec day(1, {PF(99, 1000, "gone_day", Transform(Transform::Kind::kDay))});
  EXPECT_ERROR(day.PartitionType(TestSchema()), ErrorKind::kInvalidArgument, "99");
}

TEST(PartitionSpecTest, ValidateRejectsMissingSourcesAndWrongTypes) {
  EXPECT_ERROR(PartitionSpec(0, {PF(42, 1000, "x", Transform::Identity())}).Validate(TestSchema()),
               ErrorKind::kInvalidArgument, "source id 42");
  EXPECT_ERROR(PartitionSpec(0, {PF(4, 1000, "d_hour", Transform(Transform::Kind::kHour))}).Validate(TestSchema()),
               ErrorKind::kInvalidArgument, "d_hour");
  EXPECT_ERROR(PartitionSpec(0, {PF(6, 1000, "f_bucket", Transform::Bucket(4))}).Validate(TestSchema()),
               ErrorKind::kInvalidArgument, "float");
  EXPECT_ERROR(PartitionSpec(0, {PF(2, 1000, "ts_trunc", Transform::Truncate(4))}).Validate(TestSchema()),
               ErrorKind::kInvalidArgument, "timestamptz");
  EXPECT_ERROR(PartitionSpec(0, {PF(7, 1000, "s", Transform::Identity())}).Validate(TestSchema()),
               ErrorKind::kInvalidArgument, "'s'");
  ASSERT_OK_AND_ASSIGN(auto unknown, Transform::Parse("zorder"));
  EXPECT_ERROR(PartitionSpec(0, {PF(1, 1000, "z", unknown)}).Validate(TestSchema()), ErrorKind::kUnsupported,
               "zorder");
  EXPECT_ERROR(PartitionSpec(0, {PF(1, 1000, "p", Transform::Identity()), PF(3, 1001, "p", Transform::Identity())})
                   .Validate(TestSchema()),
               ErrorKind::kInvalidArgument, "'p' is used twice");
  // A nested primitive can be a partition source.
  EXPECT_OK(PartitionSpec(0, {PF(8, 1000, "inner", Transform::Bucket(2))}).Validate(TestSchema()));
}

TEST(PartitionSpecTest, CompatibleWithIgnoresSpecIds) {
  PartitionSpec a(0, {PF(1, 1000, "id_bucket", Transform::Bucket(16))});
  PartitionSpec b(5, {PF(1, 1000, "id_bucket", Transform::Bucket(16))});
  PartitionSpec c(0, {PF(1, 1000, "id_bucket", Transform::Bucket(8))});
  PartitionSpec d(0, {PF(1, 1000, "other", Transform::Bucket(16))});
  EXPECT_TRUE(a.CompatibleWith(b));
  EXPECT_FALSE(a.CompatibleWith(c));
  EXPECT_FALSE(a.CompatibleWith(d));
}

TEST(PartitionSpecTest, PartitionPathEscapesNamesAndValues) {
  PartitionSpec spec(0, {PF(4, 1000, "d_day", Transform(Transform::Kind::kDay)),
                         PF(3, 1001, "name", Transform::Identity()), PF(1, 1002, "id_bucket", Transform::Bucket(4)),
                         PF(5, 1003, "amount", Transform::Identity())});
  const std::vector<Literal> values = {Literal(int32_t{17486}), Literal(std::string("a b/c")), Literal(int32_t{3}),
                                       Literal(Decimal{-5})};
  EXPECT_EQ(spec.PartitionPath(TestSchema(), values), "d_day=2017-11-16/name=a%20b%2Fc/id_bucket=3/amount=-0.05");
  const std::vector<Literal> nulls = {Literal::Null(), Literal::Null(), Literal::Null(), Literal::Null()};
  EXPECT_EQ(spec.PartitionPath(TestSchema(), nulls), "d_day=null/name=null/id_bucket=null/amount=null");
}

TEST(PartitionSpecTest, PartitionPathWritesTimeUnitsInHumanForm) {
  // Java's toHumanString (and pyiceberg's to_human_*): years, months and hours as calendar text.
  PartitionSpec spec(0, {PF(2, 1000, "ts_year", Transform(Transform::Kind::kYear)),
                         PF(2, 1001, "ts_month", Transform(Transform::Kind::kMonth)),
                         PF(2, 1002, "ts_hour", Transform(Transform::Kind::kHour)),
                         PF(2, 1003, "ts_day", Transform(Transform::Kind::kDay))});
  // 2017-11-16T22:xx: year 47, month 574, hour 419686, day 17486.
  EXPECT_EQ(spec.PartitionPath(TestSchema(), {Literal(int32_t{47}), Literal(int32_t{574}), Literal(int32_t{419686}),
                                              Literal(int32_t{17486})}),
            "ts_year=2017/ts_month=2017-11/ts_hour=2017-11-16-22/ts_day=2017-11-16");
  // One unit before 1970 floors into 1969.
  EXPECT_EQ(spec.PartitionPath(TestSchema(), {Literal(int32_t{-1}), Literal(int32_t{-1}), Literal(int32_t{-1}),
                                              Literal(int32_t{-1})}),
            "ts_year=1969/ts_month=1969-12/ts_hour=1969-12-31-23/ts_day=1969-12-31");
  EXPECT_EQ(spec.PartitionPath(TestSchema(), {Literal(int32_t{0}), Literal(int32_t{-13}), Literal(int32_t{-25}),
                                              Literal(int32_t{0})}),
            "ts_year=1970/ts_month=1968-12/ts_hour=1969-12-30-23/ts_day=1970-01-01");
}

}  // namespace
}  // namespace lakesync::iceberg
