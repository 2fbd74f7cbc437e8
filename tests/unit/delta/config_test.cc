// Protocol checks, schema conversion and timestamp parsing (pure functions).
#include <arrow/type.h>
#include <gtest/gtest.h>

#include "delta_test_util.h"
#include "lakesync/delta/delta_table.h"
#include "lakesync/delta/table_config.h"

namespace lakesync::delta {
namespace {

TEST(FeatureCheckTest, ReaderFeatures) {
  Protocol p;
  p.min_reader_version = 3;
  p.min_writer_version = 7;
  p.reader_features = std::vector<std::string>{"deletionVectors", "columnMapping", "timestampNtz", "v2Checkpoint",
                                               "typeWidening", "vacuumProtocolCheck"};
  p.writer_features = std::vector<std::string>{"inCommitTimestamp", "rowTracking", "someFutureWriterFeature"};
  EXPECT_TRUE(CheckReadable(p, "t").ok());
  p.reader_features->push_back("variantType");
  p.reader_features->push_back("fancyNewThing");
  auto st = CheckReadable(p, "t at version 3");
  EXPECT_EQ(KindOf(st), ErrorKind::kUnsupported);
  EXPECT_NE(st.ToString().find("variantType"), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find("fancyNewThing"), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find("version 3"), std::string::npos) << st.ToString();
  p.reader_features = std::vector<std::string>{"catalogManaged"};
  st = CheckReadable(p, "t");
  EXPECT_EQ(KindOf(st), ErrorKind::kUnsupported);
  EXPECT_NE(st.ToString().find("catalog"), std::string::npos);
  p.reader_features.reset();
  p.min_reader_version = 4;
  EXPECT_EQ(KindOf(CheckReadable(p, "t")), ErrorKind::kUnsupported);
}

TEST(FeatureCheckTest, ColumnMappingNeedsTheProtocol) {
  Metadata m;
  m.configuration["delta.columnMapping.mode"] = "name";
  Protocol p;  // 1/2: mapping not enabled by the protocol, so the property is ignored
  ASSERT_OK_AND_ASSIGN(auto mode, ColumnMapping(p, m));
  EXPECT_EQ(mode, ColumnMappingMode::kNone);
  p.min_reader_version = 2;
  ASSERT_OK_AND_ASSIGN(mode, ColumnMapping(p, m));
  EXPECT_EQ(mode, ColumnMappingMode::kName);
  p.min_reader_version = 3;
  p.reader_features = std::vector<std::string>{"columnMapping"};
  m.configuration["delta.columnMapping.mode"] = "id";
  ASSERT_OK_AND_ASSIGN(mode, ColumnMapping(p, m));
  EXPECT_EQ(mode, ColumnMappingMode::kId);
  m.configuration["delta.columnMapping.mode"] = "bogus";
  EXPECT_EQ(KindOf(ColumnMapping(p, m).status()), ErrorKind::kCorrupt);
}

TEST(SchemaTest, TypesFollowTheProtocol) {
  const std::string schema = R"json({"type":"struct","fields":[
    {"name":"b","type":"byte","nullable":true,"metadata":{}},
    {"name":"s","type":"short","nullable":true,"metadata":{}},
    {"name":"i","type":"integer","nullable":false,"metadata":{}},
    {"name":"l","type":"long","nullable":true,"metadata":{}},
    {"name":"f","type":"float","nullable":true,"metadata":{}},
    {"name":"d","type":"double","nullable":true,"metadata":{}},
    {"name":"dec","type":"decimal(12,3)","nullable":true,"metadata":{}},
    {"name":"str","type":"string","nullable":true,"metadata":{}},
    {"name":"bin","type":"binary","nullable":true,"metadata":{}},
    {"name":"bool","type":"boolean","nullable":true,"metadata":{}},
    {"name":"dt","type":"date","nullable":true,"metadata":{}},
    {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
    {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
    {"name":"arr","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},
    {"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},
    {"name":"st","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
    {"name":"p","type":"string","nullable":true,"metadata":{}}]})json";
  ASSERT_OK_AND_ASSIGN(auto ts, ParseTableSchema(schema, {"p"}, ColumnMappingMode::kNone));
  const auto& o = *ts.output;
  EXPECT_TRUE(o.GetFieldByName("b")->type()->Equals(arrow::int8()));
  EXPECT_TRUE(o.GetFieldByName("s")->type()->Equals(arrow::int16()));
  EXPECT_TRUE(o.GetFieldByName("i")->type()->Equals(arrow::int32()));
  EXPECT_FALSE(o.GetFieldByName("i")->nullable());
  EXPECT_TRUE(o.GetFieldByName("dec")->type()->Equals(arrow::decimal128(12, 3)));
  EXPECT_TRUE(o.GetFieldByName("ts")->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  EXPECT_TRUE(o.GetFieldByName("ntz")->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO)));
  EXPECT_TRUE(o.GetFieldByName("dt")->type()->Equals(arrow::date32()));
  EXPECT_EQ(o.GetFieldByName("arr")->type()->id(), arrow::Type::LIST);
  EXPECT_EQ(o.GetFieldByName("m")->type()->id(), arrow::Type::MAP);
  EXPECT_EQ(o.GetFieldByName("st")->type()->id(), arrow::Type::STRUCT);
  // The partition column is in the output but not read from data files.
  EXPECT_EQ(ts.read_index.back(), -1);
  EXPECT_EQ(ts.read_schema->fields().size(), 16u);
  EXPECT_EQ(KindOf(ParseTableSchema(R"({"type":"struct","fields":[{"name":"v","type":"variant","nullable":true}]})", {},
                                    ColumnMappingMode::kNone)
                       .status()),
            ErrorKind::kUnsupported);
  EXPECT_EQ(KindOf(ParseTableSchema("{", {}, ColumnMappingMode::kNone).status()), ErrorKind::kCorrupt);
  EXPECT_EQ(KindOf(ParseTableSchema(schema, {"nope"}, ColumnMappingMode::kNone).status()), ErrorKind::kInvalidArgument);
}

TEST(SchemaTest, ColumnMappingUsesPhysicalNamesAndIds) {
  const std::string schema = R"json({"type":"struct","fields":[
    {"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-a"}},
    {"name":"nested","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,
       "metadata":{"delta.columnMapping.id":7,"delta.columnMapping.physicalName":"col-x"}}]},"nullable":true,
     "metadata":{"delta.columnMapping.id":6,"delta.columnMapping.physicalName":"col-n"}}]})json";
  ASSERT_OK_AND_ASSIGN(auto ts, ParseTableSchema(schema, {}, ColumnMappingMode::kId));
  EXPECT_EQ(ts.output->field(0)->name(), "id");
  EXPECT_EQ(ts.read_schema->fields()[0].name, "col-a");
  EXPECT_EQ(ts.read_schema->fields()[0].id, 5);
  EXPECT_EQ(ts.read_schema->fields()[1].type->fields()[0].name, "col-x");
  EXPECT_EQ(ts.read_schema->fields()[1].type->fields()[0].id, 7);
  ASSERT_OK_AND_ASSIGN(auto none, ParseTableSchema(schema, {}, ColumnMappingMode::kNone));
  EXPECT_EQ(none.read_schema->fields()[0].name, "id");
  EXPECT_NE(ts.fingerprint, none.fingerprint);
}

TEST(TimestampTest, IsoAndEpochMillis) {
  ASSERT_OK_AND_ASSIGN(auto a, ParseTimestampMillis("1714564800000"));
  EXPECT_EQ(a, 1714564800000);
  ASSERT_OK_AND_ASSIGN(auto b, ParseTimestampMillis("2024-05-01T12:00:00Z"));
  EXPECT_EQ(b, 1714564800000);
  ASSERT_OK_AND_ASSIGN(auto c, ParseTimestampMillis("2024-05-01T14:00:00.123+02:00"));
  EXPECT_EQ(c, 1714564800123);
  ASSERT_OK_AND_ASSIGN(auto d, ParseTimestampMillis("2024-05-01"));
  EXPECT_EQ(d, 1714521600000);
  EXPECT_EQ(KindOf(ParseTimestampMillis("yesterday").status()), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(ParseTimestampMillis("").status()), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace lakesync::delta
