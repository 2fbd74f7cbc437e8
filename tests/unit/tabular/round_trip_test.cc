// Property test: random rows of every Iceberg-mapped type written with MakeRecordWriter (JSON Lines;
// CSV for top-level primitive columns) and read back with OpenReader against the same schema must be
// the original batch exactly: same schema (field metadata included), same values bit for bit (NaN,
// -0.0, subnormals, pre-1970 and far-future timestamps, non-ASCII and control characters, 38-digit
// decimals, empty strings and binaries, nulls at every level).
#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compare.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>

#include "tabular_test_util.h"

namespace lakesync::tabular {
namespace {

using testing::ReadAll;
using testing::ScratchDir;

std::shared_ptr<const arrow::KeyValueMetadata> Id(int id) {
  return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)});
}

arrow::FieldVector PrimitiveFields() {
  int id = 100;
  auto f = [&](std::string name, std::shared_ptr<arrow::DataType> type, bool nullable = true) {
    return arrow::field(std::move(name), std::move(type), nullable, Id(++id));
  };
  return {
      f("b", arrow::boolean()),
      f("i", arrow::int32()),
      f("l", arrow::int64(), false),
      f("f", arrow::float32()),
      f("d", arrow::float64()),
      f("dec_small", arrow::decimal128(9, 2)),
      f("dec_big", arrow::decimal128(38, 10)),
      f("dec_int", arrow::decimal128(38, 0)),
      f("date", arrow::date32()),
      f("time", arrow::time64(arrow::TimeUnit::MICRO)),
      f("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      f("tstz", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      f("ts_ns", arrow::timestamp(arrow::TimeUnit::NANO)),
      f("tstz_ns", arrow::timestamp(arrow::TimeUnit::NANO, "UTC")),
      f("s", arrow::utf8()),
      f("bin", arrow::binary()),
      f("uuid", arrow::fixed_size_binary(16)),
      f("fixed", arrow::fixed_size_binary(5)),
  };
}

arrow::FieldVector NestedFields() {
  auto point = arrow::struct_({arrow::field("x", arrow::float64(), false, Id(201)),
                               arrow::field("when", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), true, Id(202)),
                               arrow::field("tags", arrow::list(arrow::field("element", arrow::utf8(), true, Id(204))),
                                            true, Id(203))});
  return {
      arrow::field("st", point, true, Id(210)),
      arrow::field("req_st", arrow::struct_({arrow::field("a", arrow::decimal128(20, 4), false, Id(211))}), false,
                   Id(212)),
      arrow::field("dates", arrow::list(arrow::field("element", arrow::date32(), false, Id(213))), true, Id(214)),
      arrow::field("points", arrow::list(arrow::field("element", point, true, Id(215))), true, Id(216)),
      arrow::field("by_name",
                   std::make_shared<arrow::MapType>(arrow::field("key", arrow::utf8(), false, Id(217)),
                                                    arrow::field("value", arrow::binary(), true, Id(218))),
                   true, Id(219)),
      arrow::field("by_id",
                   std::make_shared<arrow::MapType>(
                       arrow::field("key", arrow::int64(), false, Id(220)),
                       arrow::field("value", arrow::list(arrow::field("element", arrow::float32(), true, Id(221))),
                                    false, Id(222))),
                   true, Id(223)),
      arrow::field("by_day",
                   std::make_shared<arrow::MapType>(arrow::field("key", arrow::date32(), false, Id(224)),
                                                    arrow::field("value", arrow::fixed_size_binary(16), true, Id(225))),
                   true, Id(226)),
  };
}

class RandomRows {
 public:
  explicit RandomRows(uint64_t seed) : rng_(seed) {}

  std::shared_ptr<arrow::RecordBatch> Batch(const std::shared_ptr<arrow::Schema>& schema, int64_t rows) {
    arrow::ArrayVector columns;
    for (const auto& f : schema->fields()) {
      std::unique_ptr<arrow::ArrayBuilder> builder;
      EXPECT_TRUE(arrow::MakeBuilder(arrow::default_memory_pool(), f->type(), &builder).ok());
      for (int64_t r = 0; r < rows; ++r) EXPECT_TRUE(Append(builder.get(), *f).ok()) << f->ToString();
      auto array = builder->Finish().ValueOrDie();
      columns.push_back(array->View(f->type()).ValueOrDie());
    }
    return arrow::RecordBatch::Make(schema, rows, columns);
  }

 private:
  uint64_t U64() { return rng_(); }
  int64_t Between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool OneIn(int n) { return Between(0, n - 1) == 0; }

  // Doubles and floats from raw bits half of the time (NaN payloads aside, which JSON cannot carry:
  // every NaN reads back as the one quiet NaN, and is compared as NaN), special values often.
  template <typename T, typename Bits>
  T Floating() {
    switch (Between(0, 9)) {
      case 0: return std::numeric_limits<T>::quiet_NaN();
      case 1: return std::numeric_limits<T>::infinity();
      case 2: return -std::numeric_limits<T>::infinity();
      case 3: return OneIn(2) ? T(0) : -T(0);
      case 4: return std::numeric_limits<T>::denorm_min() * static_cast<T>(Between(1, 1000));
      case 5: return static_cast<T>(Between(-1000000, 1000000)) / T(8);
      default: {
        T v = std::bit_cast<T>(static_cast<Bits>(U64()));
        return std::isnan(v) ? T(1) / T(3) : v;
      }
    }
  }

  std::string Text() {
    static const std::vector<std::string> pieces = {
        "a", "Z", " ", ",", "\"", "\\", "\n", "\r\n", "\t", "\x01", "\x1f", "é", "ß", "中文", "😀", "{", "}",
        "[", "null", "NaN", "'", "/", "\u2028"};
    if (OneIn(8)) return "";
    std::string s;
    const int64_t n = Between(1, 12);
    for (int64_t i = 0; i < n; ++i) s += pieces[static_cast<size_t>(Between(0, static_cast<int64_t>(pieces.size()) - 1))];
    return s;
  }

  std::string Bytes(int64_t n) {
    std::string s;
    for (int64_t i = 0; i < n; ++i) s.push_back(static_cast<char>(U64() & 0xff));
    return s;
  }

  arrow::Decimal128 Decimal(int precision) {
    // Up to `precision` random digits, sometimes all of them.
    const int64_t digits = OneIn(3) ? precision : Between(1, precision);
    std::string text = OneIn(2) ? "-" : "";
    for (int64_t i = 0; i < digits; ++i) text.push_back(static_cast<char>('0' + Between(0, 9)));
    arrow::Decimal128 d;
    int32_t p, s;
    EXPECT_TRUE(arrow::Decimal128::FromString(text, &d, &p, &s).ok()) << text;
    return d;
  }

  arrow::Status Append(arrow::ArrayBuilder* builder, const arrow::Field& field) {
    if (field.nullable() && OneIn(6)) return builder->AppendNull();
    const auto& type = *field.type();
    switch (type.id()) {
      case arrow::Type::BOOL: return static_cast<arrow::BooleanBuilder*>(builder)->Append(OneIn(2));
      case arrow::Type::INT32: {
        const int32_t v = OneIn(5) ? (OneIn(2) ? INT32_MIN : INT32_MAX) : static_cast<int32_t>(U64());
        return static_cast<arrow::Int32Builder*>(builder)->Append(v);
      }
      case arrow::Type::INT64: {
        const int64_t v = OneIn(5) ? (OneIn(2) ? INT64_MIN : INT64_MAX) : static_cast<int64_t>(U64());
        return static_cast<arrow::Int64Builder*>(builder)->Append(v);
      }
      case arrow::Type::FLOAT: return static_cast<arrow::FloatBuilder*>(builder)->Append(Floating<float, uint32_t>());
      case arrow::Type::DOUBLE:
        return static_cast<arrow::DoubleBuilder*>(builder)->Append(Floating<double, uint64_t>());
      case arrow::Type::DECIMAL128:
        return static_cast<arrow::Decimal128Builder*>(builder)->Append(
            Decimal(static_cast<const arrow::Decimal128Type&>(type).precision()));
      case arrow::Type::DATE32:
        // Years 0001 to 9999 and beyond, with the days around 1970 often.
        return static_cast<arrow::Date32Builder*>(builder)->Append(
            static_cast<int32_t>(OneIn(2) ? Between(-719162, 2932896) : Between(-1000, 1000)));
      case arrow::Type::TIME64:
        return static_cast<arrow::Time64Builder*>(builder)->Append(Between(0, 86400LL * 1000000 - 1));
      case arrow::Type::TIMESTAMP: {
        const bool nanos = static_cast<const arrow::TimestampType&>(type).unit() == arrow::TimeUnit::NANO;
        // Nanoseconds: all of 1677-2262 but a day at either end; microseconds: about 190,000 years
        // either side of 1970, with expanded years ("-0044-03-15", "+10000-01-01").
        const int64_t limit = nanos ? INT64_MAX - 86400LL * 1000000000 : 6000000000000000000LL;
        int64_t v = OneIn(3) ? Between(-5, 5) : Between(-limit, limit);
        if (OneIn(4)) v -= v % (nanos ? 1000000000 : 1000000);  // whole seconds print without a fraction
        return static_cast<arrow::TimestampBuilder*>(builder)->Append(v);
      }
      case arrow::Type::STRING: return static_cast<arrow::StringBuilder*>(builder)->Append(Text());
      case arrow::Type::BINARY:
        return static_cast<arrow::BinaryBuilder*>(builder)->Append(Bytes(OneIn(5) ? 0 : Between(1, 20)));
      case arrow::Type::FIXED_SIZE_BINARY:
        return static_cast<arrow::FixedSizeBinaryBuilder*>(builder)->Append(
            Bytes(static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width()));
      case arrow::Type::STRUCT: {
        auto* b = static_cast<arrow::StructBuilder*>(builder);
        ARROW_RETURN_NOT_OK(b->Append());
        for (int i = 0; i < type.num_fields(); ++i) ARROW_RETURN_NOT_OK(Append(b->field_builder(i), *type.field(i)));
        return arrow::Status::OK();
      }
      case arrow::Type::LIST: {
        auto* b = static_cast<arrow::ListBuilder*>(builder);
        ARROW_RETURN_NOT_OK(b->Append());
        const int64_t n = Between(0, 4);
        for (int64_t i = 0; i < n; ++i) ARROW_RETURN_NOT_OK(Append(b->value_builder(), *type.field(0)));
        return arrow::Status::OK();
      }
      case arrow::Type::MAP: {
        const auto& m = static_cast<const arrow::MapType&>(type);
        auto* b = static_cast<arrow::MapBuilder*>(builder);
        ARROW_RETURN_NOT_OK(b->Append());
        const int64_t n = Between(0, 3);
        for (int64_t i = 0; i < n; ++i) {
          if (m.key_type()->id() == arrow::Type::STRING) {
            // Distinct keys: an object cannot hold one twice.
            ARROW_RETURN_NOT_OK(static_cast<arrow::StringBuilder*>(b->key_builder())->Append(Text() + std::to_string(i)));
          } else {
            ARROW_RETURN_NOT_OK(Append(b->key_builder(), *m.key_field()));
          }
          ARROW_RETURN_NOT_OK(Append(b->item_builder(), *m.item_field()));
        }
        return arrow::Status::OK();
      }
      default: return arrow::Status::NotImplemented("no generator for ", type.ToString());
    }
  }

  std::mt19937_64 rng_;
};

void ExpectSameBatch(const arrow::RecordBatch& want, const arrow::Table& got) {
  ASSERT_TRUE(got.schema()->Equals(*want.schema(), /*check_metadata=*/true)) << got.schema()->ToString(true);
  auto combined = got.CombineChunksToBatch().ValueOrDie();
  ASSERT_EQ(combined->num_rows(), want.num_rows());
  // NaN equals NaN here, and -0.0 differs from 0.0: the values must come back bit for bit.
  const auto options = arrow::EqualOptions::Defaults().nans_equal(true).signed_zeros_equal(false);
  for (int c = 0; c < want.num_columns(); ++c) {
    EXPECT_TRUE(combined->column(c)->type()->Equals(*want.column(c)->type(), /*check_metadata=*/true))
        << want.schema()->field(c)->name();
    if (combined->column(c)->Equals(*want.column(c), options)) continue;
    for (int64_t r = 0; r < want.num_rows(); ++r) {
      auto a = want.column(c)->Slice(r, 1);
      auto b = combined->column(c)->Slice(r, 1);
      if (!a->Equals(*b, options)) {
        ADD_FAILURE() << "column " << want.schema()->field(c)->name() << " row " << r << ": wrote "
                      << a->ToString() << " read " << b->ToString();
        break;
      }
    }
  }
}

void RoundTrip(Format format, const std::shared_ptr<arrow::Schema>& schema, uint64_t seed, int64_t rows,
               int64_t batch_rows) {
  ScratchDir dir;
  const std::string path = dir.Path(format == Format::kCsv ? "rows.csv" : "rows.jsonl");
  RandomRows random(seed);
  auto batch = random.Batch(schema, rows);
  ASSERT_TRUE(batch->ValidateFull().ok());
  {
    auto out = testing::LocalIO()->OpenOutput(path).ValueOrDie();
    auto writer = MakeRecordWriter(format, schema, out).ValueOrDie();
    // In two writes, so that the file is not one writer batch.
    ASSERT_TRUE(writer->Write(*batch->Slice(0, rows / 2)).ok());
    ASSERT_TRUE(writer->Write(*batch->Slice(rows / 2)).ok());
    ASSERT_TRUE(writer->Close().ok());
    ASSERT_TRUE(out->Close().ok());
  }
  auto table = ReadAll(path, format, schema, batch_rows);
  ASSERT_TRUE(table.ok()) << "seed " << seed << ": " << table.status().ToString();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ExpectSameBatch(*batch, **table);
}

TEST(RoundTripTest, JsonLinesAllTypes) {
  arrow::FieldVector fields = PrimitiveFields();
  for (auto& f : NestedFields()) fields.push_back(f);
  auto schema = arrow::schema(fields);
  for (uint64_t seed = 1; seed <= 20; ++seed) RoundTrip(Format::kJsonl, schema, seed, 300, 64);
}

TEST(RoundTripTest, CsvTopLevelPrimitives) {
  auto schema = arrow::schema(PrimitiveFields());
  for (uint64_t seed = 1; seed <= 20; ++seed) RoundTrip(Format::kCsv, schema, seed, 300, 1024);
}

TEST(RoundTripTest, CsvWithOneColumnKeepsNullRows) {
  // A null is an empty line there, which CSV readers commonly skip.
  auto schema = arrow::schema({arrow::field("s", arrow::utf8())});
  for (uint64_t seed = 1; seed <= 5; ++seed) RoundTrip(Format::kCsv, schema, seed, 100, 1024);
}

TEST(RoundTripTest, CsvNestedValuesAsJsonText) {
  auto schema = arrow::schema(NestedFields());
  for (uint64_t seed = 1; seed <= 10; ++seed) RoundTrip(Format::kCsv, schema, seed, 200, 1024);
}

}  // namespace
}  // namespace lakesync::tabular
