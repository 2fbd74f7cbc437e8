// delta::RenamedColumns: renames under column mapping are found by physical name, at any depth of
// struct fields (and inside a list's structs), and only where a field's own name changed.
#include "lakesync/delta/schema.h"

#include <gtest/gtest.h>

#include <arrow/type.h>

#include <map>
#include <string>

namespace lakesync::delta {
namespace {

// A Spark JSON field with column-mapping metadata.
std::string Field(const std::string& name, const std::string& type, int id) {
  return "{\"name\":\"" + name + "\",\"type\":" + type +
         ",\"nullable\":true,\"metadata\":{\"delta.columnMapping.id\":" + std::to_string(id) +
         ",\"delta.columnMapping.physicalName\":\"col-" + std::to_string(id) + "\"}}";
}

std::string Struct(const std::string& fields) { return "{\"type\":\"struct\",\"fields\":[" + fields + "]}"; }

// id, st: struct<a: int, in: struct<x: long>>, li: array<struct<c: string>>, p (partition column).
TableSchema Schema(const std::string& st, const std::string& a, const std::string& in, const std::string& x,
                   const std::string& c, const std::string& p = "p") {
  const std::string schema = Struct(
      Field("id", "\"long\"", 1) + "," +
      Field(st, Struct(Field(a, "\"integer\"", 3) + "," + Field(in, Struct(Field(x, "\"long\"", 5)), 4)), 2) + "," +
      Field("li", "{\"type\":\"array\",\"elementType\":" + Struct(Field(c, "\"string\"", 7)) + ",\"containsNull\":true}",
            6) +
      "," + Field(p, "\"string\"", 8));
  auto parsed = ParseTableSchema(schema, {p}, ColumnMappingMode::kName);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return *parsed;
}

TEST(DeltaSchemaTest, RenamedColumnsFollowsPhysicalNamesAtAnyDepth) {
  const auto before = Schema("st", "a", "in", "x", "c");
  EXPECT_TRUE(RenamedColumns(before, before).empty());
  // Nested fields renamed: listed by old and new path.
  EXPECT_EQ(RenamedColumns(before, Schema("st", "b", "in", "y", "d")),
            (std::map<std::string, std::string>{{"st.a", "st.b"}, {"st.in.x", "st.in.y"}, {"li.element.c", "li.element.d"}}));
  // The struct renamed: its fields are not listed unless their own name changed too; a partition
  // column by its physical name.
  EXPECT_EQ(RenamedColumns(before, Schema("s2", "a", "in", "x2", "c", "q")),
            (std::map<std::string, std::string>{{"st", "s2"}, {"st.in.x", "s2.in.x2"}, {"p", "q"}}));
  // Without column mapping nothing can be told.
  auto plain = before;
  plain.mode = ColumnMappingMode::kNone;
  EXPECT_TRUE(RenamedColumns(plain, Schema("st", "b", "in", "x", "c")).empty());
}

}  // namespace
}  // namespace lakesync::delta
