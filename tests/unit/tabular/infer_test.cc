// JSON Lines column types without a table (InferJsonlSchema): the temporal types come from the values'
// spelling (the JSON Lines contract of docs/cli.md), so lakesync's own output reads back with its zones.
#include <arrow/array.h>
#include <arrow/type.h>
#include <gtest/gtest.h>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::LocalIO;
using testing::ScratchDir;

std::shared_ptr<arrow::Schema> Infer(const ScratchDir& dir, const std::string& lines) {
  const std::string path = dir.Write("x.jsonl", lines);
  auto schema = InferJsonlSchema(*LocalIO(), "file://" + path);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return schema.ok() ? *schema : nullptr;
}

TEST(InferJsonlSchema, ZonesOffsetsDatesAndFractionsKeepTheirMeaning) {
  ScratchDir dir;
  auto schema = Infer(dir,
                      R"({"id":1,"tz":"2024-01-31T22:31:08Z","frac":"2024-01-31T22:31:08.123456Z","off":"2024-01-31T22:31:08+02:00","plain":"2024-01-31T22:31:08","d":"2024-01-31","ns":"2024-01-31T22:31:08.123456789Z","s":"hello","mixed":"2024-01-31T22:31:08Z","n":null})"
                      "\n"
                      R"({"id":2,"tz":"2024-02-01T00:00:00Z","frac":"2024-02-01T00:00:00.5Z","off":"2024-02-01T00:00:00-05:00","plain":"2024-02-01 00:00:00","d":"2024-02-01","ns":"2024-02-01T00:00:00Z","s":"2024-01-31","mixed":"2024-01-31T22:31:08","n":null})"
                      "\n");
  ASSERT_NE(schema, nullptr);
  auto type = [&](const char* name) { return schema->GetFieldByName(name)->type()->ToString(); };
  EXPECT_EQ(type("id"), "int64");
  EXPECT_EQ(type("tz"), "timestamp[us, tz=UTC]");
  EXPECT_EQ(type("frac"), "timestamp[us, tz=UTC]");
  EXPECT_EQ(type("off"), "timestamp[us, tz=UTC]");
  EXPECT_EQ(type("plain"), "timestamp[us]");
  EXPECT_EQ(type("d"), "date32[day]");
  EXPECT_EQ(type("ns"), "timestamp[ns, tz=UTC]");
  EXPECT_EQ(type("s"), "string");      // text that is not a date everywhere stays text
  EXPECT_EQ(type("mixed"), "string");  // a zone on some values only: no type fits both
  EXPECT_EQ(type("n"), "string");      // all null: no type to guess, text
}

TEST(InferJsonlSchema, ReadingWithoutATableUsesTheInferredTypes) {
  ScratchDir dir;
  const std::string path = dir.Write("y.jsonl", R"({"at":"2024-01-31T22:31:08.5+01:00"})"
                                                "\n");
  auto table = testing::ReadAll(path, Format::kJsonl, nullptr);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ((*table)->schema()->field(0)->type()->ToString(), "timestamp[us, tz=UTC]");
  auto column = std::static_pointer_cast<arrow::TimestampArray>((*table)->column(0)->chunk(0));
  // 2024-01-31T21:31:08.5Z in microseconds since the epoch.
  EXPECT_EQ(column->Value(0), 1706736668500000);
}

}  // namespace
}  // namespace lakesync::tabular
