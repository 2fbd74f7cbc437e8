// Helpers shared by the Parquet and Iceberg-writer unit tests: temporary directories, local streams
// and a generator of random rows for every Iceberg type whose expected metrics are computed from the
// generated values themselves.
#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "lakesync/iceberg/model/arrow_schema.h"
#include "lakesync/iceberg/model/literal.h"
#include "lakesync/iceberg/model/schema.h"

namespace lakesync::testing {

// An Arrow array from its JSON form (Arrow's own parser): Json(arrow::int64(), "[1, null]").
inline std::shared_ptr<arrow::Array> Json(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  return arrow::json::ArrayFromJSONString(type, json).ValueOrDie();
}

#define LS_ASSERT_OK(expr)                                      \
  do {                                                          \
    auto _st = (expr);                                          \
    ASSERT_TRUE(_st.ok()) << _st.ToString();                    \
  } while (0)

#define LS_ASSERT_OK_AND_ASSIGN(lhs, rexpr)                     \
  auto LS_CONCAT(_r_, __LINE__) = (rexpr);                      \
  ASSERT_TRUE(LS_CONCAT(_r_, __LINE__).ok()) << LS_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = std::move(LS_CONCAT(_r_, __LINE__)).ValueUnsafe();

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lakesync-test-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    path_ = made ? made : tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::shared_ptr<arrow::io::OutputStream> OpenOut(const std::string& path) {
  return arrow::io::FileOutputStream::Open(path).ValueOrDie();
}
inline std::shared_ptr<arrow::io::RandomAccessFile> OpenIn(const std::string& path) {
  return arrow::io::ReadableFile::Open(path).ValueOrDie();
}

inline iceberg::NestedField Field(int32_t id, std::string name, iceberg::TypePtr type, bool required = false) {
  iceberg::NestedField f;
  f.id = id;
  f.name = std::move(name);
  f.type = std::move(type);
  f.required = required;
  return f;
}

// Expected metrics for one leaf, computed from generated values.
struct LeafExpectation {
  int64_t values = 0;  // Parquet slots: one per value or null, and one per null/empty list
  int64_t nulls = 0;
  int64_t nans = 0;
  std::optional<iceberg::Literal> min;
  std::optional<iceberg::Literal> max;
  bool bounds = true;  // false inside lists/maps

  void Present(const iceberg::Literal& v, bool is_nan = false) {
    ++values;
    if (is_nan) {
      ++nans;
      return;
    }
    if (!min || v.Compare(*min) < 0) min = v;
    if (!max || v.Compare(*max) > 0) max = v;
  }
  void Null() {
    ++values;
    ++nulls;
  }
};

// Rows of a schema with every primitive type plus a struct, a list, a map and a list of structs.
// Strings stay within 16 code points so truncate(16) leaves them whole; values include nulls,
// NaNs, empty strings, pre-epoch dates and timestamps and negative decimals.
struct AllTypesData {
  iceberg::SchemaPtr schema;
  std::shared_ptr<arrow::RecordBatch> batch;
  std::map<int32_t, LeafExpectation> expect;
};

inline iceberg::SchemaPtr AllTypesSchema() {
  using iceberg::Type;
  std::vector<iceberg::NestedField> fields = {
      Field(1, "b", Type::Boolean()),
      Field(2, "i", Type::Int(), true),
      Field(3, "l", Type::Long()),
      Field(4, "f", Type::Float()),
      Field(5, "d", Type::Double()),
      Field(6, "dec9", Type::Decimal(9, 2)),
      Field(7, "dec18", Type::Decimal(18, 6)),
      Field(8, "dec38", Type::Decimal(38, 10)),
      Field(9, "date", Type::Date()),
      Field(10, "time", Type::Time()),
      Field(11, "ts", Type::Timestamp()),
      Field(12, "tstz", Type::TimestampTz()),
      Field(13, "tsns", Type::TimestampNs()),
      Field(14, "s", Type::String()),
      Field(15, "u", Type::Uuid()),
      Field(16, "fx", Type::Fixed(5)),
      Field(17, "bin", Type::Binary()),
      Field(18, "st", Type::Struct({Field(19, "a", Type::Int()), Field(20, "b", Type::String()),
                                     Field(21, "x", Type::Double())})),
      Field(22, "lst", Type::List(Field(23, "element", Type::Int()))),
      Field(24, "m", Type::Map(Field(25, "key", Type::String(), true), Field(26, "value", Type::Double()))),
      Field(27, "ls", Type::List(Field(28, "element", Type::Struct({Field(29, "f", Type::Float())})))),
  };
  return std::make_shared<const iceberg::Schema>(0, fields);
}

inline __int128 RandomUnscaled(std::mt19937_64& rng, int digits) {
  __int128 v = 0;
  for (int i = 0; i < digits; ++i) v = v * 10 + static_cast<int>(rng() % 10);
  return (rng() % 2) ? -v : v;
}

inline arrow::Decimal128 ToDecimal128(__int128 v) {
  const auto u = static_cast<unsigned __int128>(v);
  return arrow::Decimal128(static_cast<int64_t>(static_cast<uint64_t>(u >> 64)), static_cast<uint64_t>(u));
}

inline std::string RandomString(std::mt19937_64& rng, int max_code_points) {
  static const std::vector<std::string> kPieces = {"a", "b", "z", "A", "0", " ", "é", "ß", "中", "😀", "~"};
  const int n = static_cast<int>(rng() % static_cast<uint64_t>(max_code_points + 1));
  std::string s;
  for (int i = 0; i < n; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

inline std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

inline AllTypesData MakeAllTypes(int64_t rows, uint64_t seed) {
  using iceberg::Literal;
  AllTypesData out;
  out.schema = AllTypesSchema();
  std::mt19937_64 rng(seed);
  auto chance = [&](int pct) { return static_cast<int>(rng() % 100) < pct; };
  auto& e = out.expect;
  for (int32_t id : {23, 25, 26, 29}) e[id].bounds = false;

  auto arrow_schema = iceberg::ToArrowSchema(*out.schema).ValueOrDie();
  auto pool = arrow::default_memory_pool();
  std::unique_ptr<arrow::ArrayBuilder> any;
  std::vector<std::shared_ptr<arrow::Array>> cols;

  arrow::BooleanBuilder b;
  arrow::Int32Builder i;
  arrow::Int64Builder l;
  arrow::FloatBuilder f;
  arrow::DoubleBuilder d;
  arrow::Decimal128Builder dec9(arrow::decimal128(9, 2)), dec18(arrow::decimal128(18, 6)),
      dec38(arrow::decimal128(38, 10));
  arrow::Date32Builder date;
  arrow::Time64Builder time(arrow::time64(arrow::TimeUnit::MICRO), pool);
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO), pool);
  arrow::TimestampBuilder tstz(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), pool);
  arrow::TimestampBuilder tsns(arrow::timestamp(arrow::TimeUnit::NANO), pool);
  arrow::StringBuilder s;
  arrow::FixedSizeBinaryBuilder u(arrow::fixed_size_binary(16)), fx(arrow::fixed_size_binary(5));
  arrow::BinaryBuilder bin;
  auto st_type = arrow_schema->field(17)->type();
  auto st_a = std::make_shared<arrow::Int32Builder>();
  auto st_b = std::make_shared<arrow::StringBuilder>();
  auto st_x = std::make_shared<arrow::DoubleBuilder>();
  arrow::StructBuilder st(st_type, pool, {st_a, st_b, st_x});
  auto lst_v = std::make_shared<arrow::Int32Builder>();
  arrow::ListBuilder lst(pool, lst_v, arrow_schema->field(18)->type());
  auto m_k = std::make_shared<arrow::StringBuilder>();
  auto m_v = std::make_shared<arrow::DoubleBuilder>();
  arrow::MapBuilder m(pool, m_k, m_v, arrow_schema->field(19)->type());
  auto ls_type = arrow_schema->field(20)->type();
  auto ls_f = std::make_shared<arrow::FloatBuilder>();
  auto ls_s = std::make_shared<arrow::StructBuilder>(ls_type->field(0)->type(), pool,
                                                     std::vector<std::shared_ptr<arrow::ArrayBuilder>>{ls_f});
  arrow::ListBuilder ls(pool, ls_s, ls_type);

  const iceberg::Type& dec9t = *out.schema->fields()[5].type;
  (void)dec9t;
  for (int64_t r = 0; r < rows; ++r) {
    // 1 boolean
    if (chance(10)) { (void)b.AppendNull(); e[1].Null(); } else { bool v = rng() % 2; (void)b.Append(v); e[1].Present(Literal(v)); }
    // 2 int (required, no nulls)
    { int32_t v = static_cast<int32_t>(rng() % 2000001) - 1000000; (void)i.Append(v); e[2].Present(Literal(v)); }
    // 3 long
    if (chance(10)) { (void)l.AppendNull(); e[3].Null(); } else { int64_t v = static_cast<int64_t>(rng()); (void)l.Append(v); e[3].Present(Literal(v)); }
    // 4 float with NaNs
    if (chance(10)) { (void)f.AppendNull(); e[4].Null(); }
    else if (chance(5)) { (void)f.Append(std::nanf("")); e[4].Present(Literal(std::nanf("")), true); }
    else { float v = static_cast<float>(static_cast<int64_t>(rng() % 200001) - 100000) / 7.0f; (void)f.Append(v); e[4].Present(Literal(v)); }
    // 5 double with NaNs and infinities
    if (chance(10)) { (void)d.AppendNull(); e[5].Null(); }
    else if (chance(5)) { (void)d.Append(std::nan("")); e[5].Present(Literal(std::nan("")), true); }
    else { double v = chance(1) ? -INFINITY : static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 13.0; (void)d.Append(v); e[5].Present(Literal(v)); }
    // 6..8 decimals
    if (chance(10)) { (void)dec9.AppendNull(); e[6].Null(); } else { auto v = RandomUnscaled(rng, 9); (void)dec9.Append(ToDecimal128(v)); e[6].Present(Literal(iceberg::Decimal{v})); }
    if (chance(10)) { (void)dec18.AppendNull(); e[7].Null(); } else { auto v = RandomUnscaled(rng, 18); (void)dec18.Append(ToDecimal128(v)); e[7].Present(Literal(iceberg::Decimal{v})); }
    if (chance(10)) { (void)dec38.AppendNull(); e[8].Null(); } else { auto v = RandomUnscaled(rng, 38); (void)dec38.Append(ToDecimal128(v)); e[8].Present(Literal(iceberg::Decimal{v})); }
    // 9 date (pre-epoch included)
    if (chance(10)) { (void)date.AppendNull(); e[9].Null(); } else { int32_t v = static_cast<int32_t>(rng() % 100000) - 50000; (void)date.Append(v); e[9].Present(Literal(v)); }
    // 10 time
    if (chance(10)) { (void)time.AppendNull(); e[10].Null(); } else { int64_t v = static_cast<int64_t>(rng() % 86400000000ULL); (void)time.Append(v); e[10].Present(Literal(v)); }
    // 11..13 timestamps (pre-epoch included)
    if (chance(10)) { (void)ts.AppendNull(); e[11].Null(); } else { int64_t v = static_cast<int64_t>(rng() % 4000000000000000ULL) - 2000000000000000LL; (void)ts.Append(v); e[11].Present(Literal(v)); }
    if (chance(10)) { (void)tstz.AppendNull(); e[12].Null(); } else { int64_t v = static_cast<int64_t>(rng() % 4000000000000000ULL) - 2000000000000000LL; (void)tstz.Append(v); e[12].Present(Literal(v)); }
    if (chance(10)) { (void)tsns.AppendNull(); e[13].Null(); } else { int64_t v = static_cast<int64_t>(rng() % 4000000000000000000ULL) - 2000000000000000000LL; (void)tsns.Append(v); e[13].Present(Literal(v)); }
    // 14 string (empty strings included)
    if (chance(10)) { (void)s.AppendNull(); e[14].Null(); } else { auto v = RandomString(rng, 16); (void)s.Append(v); e[14].Present(Literal(v)); }
    // 15 uuid, 16 fixed[5], 17 binary
    if (chance(10)) { (void)u.AppendNull(); e[15].Null(); } else { auto v = RandomBytes(rng, 16); (void)u.Append(v); e[15].Present(Literal(iceberg::Bytes{v})); }
    if (chance(10)) { (void)fx.AppendNull(); e[16].Null(); } else { auto v = RandomBytes(rng, 5); (void)fx.Append(v); e[16].Present(Literal(iceberg::Bytes{v})); }
    if (chance(10)) { (void)bin.AppendNull(); e[17].Null(); } else { auto v = RandomBytes(rng, rng() % 17); (void)bin.Append(v); e[17].Present(Literal(iceberg::Bytes{v})); }
    // 18 struct<19 a int, 20 b string, 21 x double>; a null struct makes every child null.
    if (chance(10)) {
      (void)st.AppendNull();
      e[19].Null(); e[20].Null(); e[21].Null();
    } else {
      (void)st.Append();
      if (chance(20)) { (void)st_a->AppendNull(); e[19].Null(); } else { int32_t v = static_cast<int32_t>(rng() % 1000) - 500; (void)st_a->Append(v); e[19].Present(Literal(v)); }
      if (chance(20)) { (void)st_b->AppendNull(); e[20].Null(); } else { auto v = RandomString(rng, 8); (void)st_b->Append(v); e[20].Present(Literal(v)); }
      if (chance(20)) { (void)st_x->AppendNull(); e[21].Null(); }
      else if (chance(10)) { (void)st_x->Append(std::nan("")); e[21].Present(Literal(std::nan("")), true); }
      else { double v = static_cast<double>(rng() % 1000) / 3.0; (void)st_x->Append(v); e[21].Present(Literal(v)); }
    }
    // 22 list<23 int>: null and empty lists take one slot each and count as nulls.
    if (chance(10)) { (void)lst.AppendNull(); e[23].Null(); }
    else {
      (void)lst.Append();
      const int n = static_cast<int>(rng() % 4);
      if (n == 0) e[23].Null();
      for (int k = 0; k < n; ++k) {
        if (chance(15)) { (void)lst_v->AppendNull(); e[23].Null(); } else { int32_t v = static_cast<int32_t>(rng() % 100); (void)lst_v->Append(v); e[23].Present(Literal(v)); }
      }
    }
    // 24 map<25 string, 26 double>
    if (chance(10)) { (void)m.AppendNull(); e[25].Null(); e[26].Null(); }
    else {
      (void)m.Append();
      const int n = static_cast<int>(rng() % 3);
      if (n == 0) { e[25].Null(); e[26].Null(); }
      for (int k = 0; k < n; ++k) {
        std::string key = "k" + std::to_string(k);
        (void)m_k->Append(key); e[25].Present(Literal(key));
        if (chance(15)) { (void)m_v->AppendNull(); e[26].Null(); }
        else if (chance(10)) { (void)m_v->Append(std::nan("")); e[26].Present(Literal(std::nan("")), true); }
        else { double v = static_cast<double>(rng() % 100); (void)m_v->Append(v); e[26].Present(Literal(v)); }
      }
    }
    // 27 list<28 struct<29 f float>>
    if (chance(10)) { (void)ls.AppendNull(); e[29].Null(); }
    else {
      (void)ls.Append();
      const int n = static_cast<int>(rng() % 3);
      if (n == 0) e[29].Null();
      for (int k = 0; k < n; ++k) {
        if (chance(10)) { (void)ls_s->AppendNull(); e[29].Null(); continue; }
        (void)ls_s->Append();
        if (chance(10)) { (void)ls_f->AppendNull(); e[29].Null(); }
        else if (chance(10)) { (void)ls_f->Append(std::nanf("")); e[29].Present(Literal(std::nanf("")), true); }
        else { float v = static_cast<float>(rng() % 100); (void)ls_f->Append(v); e[29].Present(Literal(v)); }
      }
    }
  }
  arrow::ArrayBuilder* builders[] = {&b, &i, &l, &f, &d, &dec9, &dec18, &dec38, &date, &time, &ts, &tstz, &tsns,
                                     &s, &u, &fx, &bin, &st, &lst, &m, &ls};
  for (auto* builder : builders) {
    std::shared_ptr<arrow::Array> a;
    EXPECT_TRUE(builder->Finish(&a).ok());
    cols.push_back(a);
  }
  // Builders type lists and maps with Arrow's default child names; give them the schema's types.
  for (int k = 0; k < arrow_schema->num_fields(); ++k) {
    auto data = cols[static_cast<size_t>(k)]->data()->Copy();
    if (!data->type->Equals(*arrow_schema->field(k)->type())) {
      auto cast = arrow::compute::Cast(*cols[static_cast<size_t>(k)], arrow_schema->field(k)->type());
      EXPECT_TRUE(cast.ok()) << cast.status().ToString();
      cols[static_cast<size_t>(k)] = *cast;
    }
  }
  out.batch = arrow::RecordBatch::Make(arrow_schema, rows, cols);
  return out;
}

}  // namespace lakesync::testing
