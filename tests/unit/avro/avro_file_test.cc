#include <arrow/util/crc32.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "avro_test_util.h"
#include "temp_dir_test_util.h"
#include "lakesync/formats/avro/avro_codec.h"
#include "lakesync/formats/avro/avro_file_reader.h"
#include "lakesync/formats/avro/avro_file_writer.h"
#include "lakesync/formats/avro/avro_schema.h"
#include "lakesync/formats/avro/avro_value.h"

namespace lakesync::avro {
namespace {

// Covers the shapes Iceberg metadata uses: ids on fields and arrays, an optional union, a named
// fixed type defined once and referred to by name, and an empty record (Iceberg's r102 for
// unpartitioned specs).
const char* kSchema = R"({"type":"record","name":"rec","fields":[
  {"name":"id","type":"long","field-id":1},
  {"name":"name","type":["null","string"],"default":null,"field-id":2},
  {"name":"tags","type":{"type":"array","items":"int","element-id":4},"field-id":3},
  {"name":"blob","type":"bytes","field-id":5},
  {"name":"flag","type":"boolean","field-id":6},
  {"name":"ratio","type":"double","field-id":7},
  {"name":"d","field-id":8,
   "type":{"type":"fixed","name":"decimal_9_2","size":4,"logicalType":"decimal","precision":9,"scale":2}},
  {"name":"d2","type":["null","decimal_9_2"],"default":null,"field-id":9},
  {"name":"empty","type":{"type":"record","name":"r10","fields":[]},"field-id":10}]})";

struct Row {
  int64_t id = 0;
  std::optional<std::string> name;
  std::vector<int32_t> tags;
  std::string blob;
  bool flag = false;
  double ratio = 0;
  std::string d;
  std::optional<std::string> d2;
  bool operator==(const Row&) const = default;
};

Row MakeRow(int64_t i) {
  Row r;
  r.id = i * 1000003 - 7;
  if (i % 3 != 0) r.name = "name-" + std::to_string(i);
  for (int k = 0; k < i % 4; ++k) r.tags.push_back(static_cast<int32_t>(i + k));
  r.blob = std::string("\0\x01\xff", 3) + std::to_string(i);
  r.flag = i % 2 == 0;
  r.ratio = static_cast<double>(i) / 7.0;
  r.d = std::string("\x00\x00\x01", 3) + static_cast<char>(i & 0xFF);
  if (i % 5 == 0) r.d2 = std::string("\xff\xff\xff", 3) + static_cast<char>(i & 0x7F);
  return r;
}

Status FillRow(avro_value_t* record, const Row& r) {
  ARROW_ASSIGN_OR_RAISE(auto id, MutableField(record, 0));
  RETURN_NOT_OK(WriteLong(&id, r.id));
  ARROW_ASSIGN_OR_RAISE(auto name, MutableField(record, 1));
  if (r.name) {
    ARROW_ASSIGN_OR_RAISE(auto branch, SetNonNullBranch(&name));
    RETURN_NOT_OK(WriteString(&branch, *r.name));
  } else {
    RETURN_NOT_OK(SetNullBranch(&name));
  }
  ARROW_ASSIGN_OR_RAISE(auto tags, MutableField(record, 2));
  for (int32_t t : r.tags) {
    ARROW_ASSIGN_OR_RAISE(auto e, AppendElement(&tags));
    RETURN_NOT_OK(WriteInt(&e, t));
  }
  ARROW_ASSIGN_OR_RAISE(auto blob, MutableField(record, 3));
  RETURN_NOT_OK(WriteBytes(&blob, r.blob));
  ARROW_ASSIGN_OR_RAISE(auto flag, MutableField(record, 4));
  RETURN_NOT_OK(WriteBool(&flag, r.flag));
  ARROW_ASSIGN_OR_RAISE(auto ratio, MutableField(record, 5));
  RETURN_NOT_OK(WriteDouble(&ratio, r.ratio));
  ARROW_ASSIGN_OR_RAISE(auto d, MutableField(record, 6));
  RETURN_NOT_OK(WriteFixed(&d, r.d));
  ARROW_ASSIGN_OR_RAISE(auto d2, MutableField(record, 7));
  if (r.d2) {
    ARROW_ASSIGN_OR_RAISE(auto branch, SetNonNullBranch(&d2));
    RETURN_NOT_OK(WriteFixed(&branch, *r.d2));
  } else {
    RETURN_NOT_OK(SetNullBranch(&d2));
  }
  return Status::OK();
}

Result<Row> ReadRow(const avro_value_t& record) {
  Row r;
  ARROW_ASSIGN_OR_RAISE(auto id, ChildAt(record, 0));
  ARROW_ASSIGN_OR_RAISE(r.id, ReadLong(id));
  ARROW_ASSIGN_OR_RAISE(auto name_union, ChildAt(record, 1));
  ARROW_ASSIGN_OR_RAISE(auto name, NonNullValue(name_union));
  if (name) {
    ARROW_ASSIGN_OR_RAISE(r.name, ReadString(*name));
  }
  ARROW_ASSIGN_OR_RAISE(auto tags, ChildAt(record, 2));
  ARROW_ASSIGN_OR_RAISE(size_t n, ChildCount(tags));
  for (size_t i = 0; i < n; ++i) {
    ARROW_ASSIGN_OR_RAISE(auto e, ChildAt(tags, i));
    ARROW_ASSIGN_OR_RAISE(int32_t v, ReadInt(e));
    r.tags.push_back(v);
  }
  ARROW_ASSIGN_OR_RAISE(auto blob, ChildAt(record, 3));
  ARROW_ASSIGN_OR_RAISE(r.blob, ReadBytes(blob));
  ARROW_ASSIGN_OR_RAISE(auto flag, ChildAt(record, 4));
  ARROW_ASSIGN_OR_RAISE(r.flag, ReadBool(flag));
  ARROW_ASSIGN_OR_RAISE(auto ratio, ChildAt(record, 5));
  ARROW_ASSIGN_OR_RAISE(r.ratio, ReadDouble(ratio));
  ARROW_ASSIGN_OR_RAISE(auto d, ChildAt(record, 6));
  ARROW_ASSIGN_OR_RAISE(r.d, ReadBytes(d));
  ARROW_ASSIGN_OR_RAISE(auto d2_union, ChildAt(record, 7));
  ARROW_ASSIGN_OR_RAISE(auto d2, NonNullValue(d2_union));
  if (d2) {
    ARROW_ASSIGN_OR_RAISE(r.d2, ReadBytes(*d2));
  }
  return r;
}

Result<std::string> WriteRows(int64_t count, AvroCodec codec, int64_t block_size,
                              std::vector<std::pair<std::string, std::string>> metadata = {}) {
  AvroFileWriterOptions options;
  options.codec = codec;
  options.block_size = block_size;
  options.name = "test.avro";
  ARROW_ASSIGN_OR_RAISE(auto writer, AvroFileWriter::Make(kSchema, std::move(metadata), options));
  for (int64_t i = 0; i < count; ++i) {
    RETURN_NOT_OK(FillRow(writer->NewRecord(), MakeRow(i)));
    RETURN_NOT_OK(writer->Append());
  }
  return writer->Finish();
}

// Reads every record; returns the first error.
Result<std::vector<Row>> ReadRows(std::string_view bytes) {
  ARROW_ASSIGN_OR_RAISE(auto reader, AvroFileReader::Open(bytes, "test.avro"));
  std::vector<Row> rows;
  while (true) {
    ARROW_ASSIGN_OR_RAISE(const avro_value_t* record, reader->Next());
    if (record == nullptr) break;
    ARROW_ASSIGN_OR_RAISE(Row row, ReadRow(*record));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Reads every record of a file without interpreting them; returns the first error.
Status ReadRowsOf(std::string_view bytes) {
  ARROW_ASSIGN_OR_RAISE(auto reader, AvroFileReader::Open(bytes, "test.avro"));
  while (true) {
    ARROW_ASSIGN_OR_RAISE(const avro_value_t* record, reader->Next());
    if (record == nullptr) return Status::OK();
  }
}

std::filesystem::path TempPath(const std::string& name) {
  return lakesync::testing::ProcessTempDir("lakesync_avro_test_" + std::to_string(::getpid())) / name;
}

TEST(AvroSchemaTest, KeepsIcebergIdsAndLogicalTypes) {
  ASSERT_OK_AND_ASSIGN(AvroSchema schema, ParseAvroSchema(kSchema));
  const AvroNode& root = *schema.root;
  ASSERT_EQ(root.type, AvroType::kRecord);
  ASSERT_EQ(root.fields.size(), 9u);
  EXPECT_EQ(root.fields[0].field_id, 1);
  EXPECT_EQ(root.fields[2].type->element_id, 4);
  EXPECT_TRUE(root.fields[1].type->IsOptional());
  EXPECT_EQ(root.fields[1].type->NonNull().type, AvroType::kString);
  const AvroNode& d = *root.fields[6].type;
  EXPECT_EQ(d.logical_type, "decimal");
  EXPECT_EQ(d.precision, 9);
  EXPECT_EQ(d.scale, 2);
  EXPECT_EQ(d.size, 4);
  // The reference by name resolves to the same definition.
  EXPECT_EQ(&root.fields[7].type->NonNull(), &d);
  EXPECT_EQ(root.fields[8].type->fields.size(), 0u);
  EXPECT_EQ(root.FindField(8, "ignored"), 6);
  EXPECT_EQ(root.FindField(std::nullopt, "blob"), 3);
  EXPECT_EQ(root.FindField(99, "blob"), -1);  // blob has id 5: a different field than id 99
  EXPECT_EQ(root.FindField(99, "nope"), -1);
  // Minimum sizes: long 1 + union 1 + array 1 + bytes 1 + boolean 1 + double 8 + fixed 4 + union 1.
  EXPECT_EQ(root.min_encoded_size, 18);
}

TEST(AvroSchemaTest, NameFallbackNeverMatchesAFieldWithAnotherId) {
  ASSERT_OK_AND_ASSIGN(AvroSchema schema, ParseAvroSchema(R"({"type":"record","name":"r","fields":[
      {"name":"a","type":"int","field-id":7},{"name":"b","type":"int"}]})"));
  EXPECT_EQ(schema.root->FindField(8, "a"), -1);
  EXPECT_EQ(schema.root->FindField(7, "x"), 0);
  EXPECT_EQ(schema.root->FindField(8, "b"), 1);
}

TEST(AvroSchemaTest, AcceptsNamesAvroCRejectsAndKeepsTheIcebergName) {
  // pyiceberg-style sanitised name with the original kept, and a raw invalid name another writer
  // might emit: both must decode.
  ASSERT_OK_AND_ASSIGN(AvroSchema schema, ParseAvroSchema(R"({"type":"record","name":"manifest-entry","fields":[
      {"name":"ts_x2Dday","iceberg-field-name":"ts-day","field-id":1000,
       "type":["null",{"type":"int","logicalType":"date"}]},
      {"name":"1st col","type":"long","field-id":1001}]})"));
  EXPECT_EQ(schema.root->fields[0].iceberg_name, "ts-day");
  EXPECT_EQ(schema.root->FindField(std::nullopt, "ts-day"), 0);
  EXPECT_EQ(schema.root->fields[0].type->NonNull().logical_type, "date");
  EXPECT_TRUE(schema.avro_c);
}

TEST(AvroSchemaTest, RejectsWhatAvroCCouldNotDecodeSafely) {
  struct Case {
    const char* json;
    ErrorKind kind;
    const char* fragment;
  };
  const Case cases[] = {
      {R"({"type":"record","name":"n","fields":[{"name":"next","type":["null","n"]}]})", ErrorKind::kUnsupported,
       "recursive"},
      {R"({"type":"array","items":"null"})", ErrorKind::kUnsupported, "zero bytes"},
      {R"({"type":"array","items":{"type":"record","name":"e","fields":[]}})", ErrorKind::kUnsupported, "zero bytes"},
      {R"({"type":"record","name":"r","fields":[{"name":"x","type":"nope"}]})", ErrorKind::kCorrupt,
       "undefined type 'nope'"},
      {R"({"type":"record","name":"r","fields":[{"name":"x","type":{"type":"record","name":"r","fields":[]}}]})",
       ErrorKind::kCorrupt, "defined twice"},
      {R"({"type":"fixed","name":"f","size":99999999})", ErrorKind::kUnsupported, "too large"},
      {R"({"type":"record","name":"r","fields":[{"type":"int"}]})", ErrorKind::kCorrupt, "has no name"},
      {R"({"type":"record","name":"r")", ErrorKind::kCorrupt, "not valid JSON"},
      {R"(["int",["long"]])", ErrorKind::kCorrupt, "another union"},
  };
  for (const auto& c : cases) {
    auto parsed = ParseAvroSchema(c.json);
    ASSERT_FALSE(parsed.ok()) << c.json;
    EXPECT_EQ(KindOf(parsed.status()), c.kind) << parsed.status().ToString();
    EXPECT_NE(parsed.status().message().find(c.fragment), std::string::npos) << parsed.status().ToString();
  }
}

TEST(AvroSchemaTest, RejectsDeepNesting) {
  std::string json = "\"int\"";
  for (int i = 0; i < 100; ++i) json = R"({"type":"array","items":)" + json + "}";
  auto parsed = ParseAvroSchema(json);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(KindOf(parsed.status()), ErrorKind::kUnsupported);
}

// Expected names follow the rule Java's AvroSchemaUtil and pyiceberg's make_compatible_name share:
// leading digit → "_<digit>", other invalid characters → "_x" + upper-case hex code point.
TEST(AvroSchemaTest, MakeCompatibleAvroName) {
  EXPECT_EQ(MakeCompatibleAvroName("ts_day"), "ts_day");
  EXPECT_EQ(MakeCompatibleAvroName("ts-day"), "ts_x2Dday");
  EXPECT_EQ(MakeCompatibleAvroName("1a"), "_1a");
  EXPECT_EQ(MakeCompatibleAvroName("9"), "_9");
  EXPECT_EQ(MakeCompatibleAvroName("a.b"), "a_x2Eb");
  EXPECT_EQ(MakeCompatibleAvroName("x y"), "x_x20y");
  EXPECT_EQ(MakeCompatibleAvroName("a$"), "a_x24");
  EXPECT_EQ(MakeCompatibleAvroName("\xc3\xa9t\xc3\xa9"), "_xE9t_xE9");  // "été"
}

class AvroCodecRoundTrip : public ::testing::TestWithParam<AvroCodec> {};

TEST_P(AvroCodecRoundTrip, RecordsAndMetadataSurviveManyBlocks) {
  const std::vector<std::pair<std::string, std::string>> metadata = {
      {"schema", R"({"type":"struct"})"}, {"format-version", "2"}, {"binary", std::string("\0\xff", 2)}};
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRows(500, GetParam(), /*block_size=*/1000, metadata));
  ASSERT_OK_AND_ASSIGN(auto reader, AvroFileReader::Open(bytes, "test.avro"));
  EXPECT_EQ(reader->codec(), GetParam());
  EXPECT_EQ(reader->FindMetadata("format-version"), "2");
  EXPECT_EQ(reader->FindMetadata("binary"), std::string("\0\xff", 2));
  EXPECT_EQ(reader->FindMetadata("avro.codec"), std::string(AvroCodecName(GetParam())));
  EXPECT_EQ(reader->schema_json(), kSchema);
  ASSERT_OK_AND_ASSIGN(auto rows, ReadRows(bytes));
  ASSERT_EQ(rows.size(), 500u);
  for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)], MakeRow(i)) << "row " << i;
}

INSTANTIATE_TEST_SUITE_P(Codecs, AvroCodecRoundTrip,
                         ::testing::Values(AvroCodec::kNull, AvroCodec::kDeflate, AvroCodec::kSnappy,
                                           AvroCodec::kZstandard),
                         [](const auto& info) { return std::string(AvroCodecName(info.param)); });

TEST(AvroFileTest, EmptyFileHasHeaderOnly) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRows(0, AvroCodec::kDeflate, 1000));
  ASSERT_OK_AND_ASSIGN(auto rows, ReadRows(bytes));
  EXPECT_TRUE(rows.empty());
}

TEST(AvroFileTest, WriterRejectsReservedAndRepeatedKeysAndNonRecordSchemas) {
  auto reserved = AvroFileWriter::Make(kSchema, {{"avro.codec", "x"}});
  ASSERT_FALSE(reserved.ok());
  EXPECT_EQ(KindOf(reserved.status()), ErrorKind::kInvalidArgument);
  auto repeated = AvroFileWriter::Make(kSchema, {{"k", "1"}, {"k", "2"}});
  ASSERT_FALSE(repeated.ok());
  auto not_record = AvroFileWriter::Make(R"("long")", {});
  ASSERT_FALSE(not_record.ok());
  EXPECT_EQ(KindOf(not_record.status()), ErrorKind::kInvalidArgument);
}

TEST(AvroFileTest, IncompleteRecordIsAnError) {
  ASSERT_OK_AND_ASSIGN(auto writer, AvroFileWriter::Make(kSchema, {}));
  writer->NewRecord();  // leaves the unions without a branch
  auto st = writer->Append();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidArgument);
}

// An independent reader: Avro C's own container reader must accept what we frame by hand.
TEST(AvroFileTest, AvroCContainerReaderReadsOurFiles) {
  for (AvroCodec codec : {AvroCodec::kNull, AvroCodec::kDeflate, AvroCodec::kSnappy}) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRows(300, codec, 700, {{"k", "v"}}));
    const auto path = TempPath("ours.avro");
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    avro_file_reader_t file_reader;
    ASSERT_EQ(avro_file_reader(path.c_str(), &file_reader), 0) << avro_strerror();
    // Avro C hands out a new reference to the writer schema.
    AvroSchemaHandle writer_schema(avro_file_reader_get_writer_schema(file_reader));
    ASSERT_OK_AND_ASSIGN(AvroGenericValue value, AvroGenericValue::Make(writer_schema.get()));
    int64_t n = 0;
    while (avro_file_reader_read_value(file_reader, value.get()) == 0) {
      ASSERT_OK_AND_ASSIGN(Row row, ReadRow(*value.get()));
      EXPECT_EQ(row, MakeRow(n)) << AvroCodecName(codec) << " row " << n;
      ++n;
    }
    EXPECT_EQ(n, 300) << AvroCodecName(codec);
    avro_file_reader_close(file_reader);
  }
}

// And the other way round: files Avro C's container writer frames, read by our reader.
TEST(AvroFileTest, ReadsFilesAvroCWrites) {
  for (const char* codec : {"null", "deflate", "snappy"}) {
    const auto path = TempPath(std::string("theirs-") + codec + ".avro");
    std::filesystem::remove(path);
    ASSERT_OK_AND_ASSIGN(AvroSchema schema, ParseAvroSchema(kSchema));
    // Avro C is given the original schema text (its own parser accepts these names).
    ASSERT_OK_AND_ASSIGN(AvroSchemaHandle handle, AvroSchemaHandle::FromJson(kSchema));
    avro_file_writer_t file_writer;
    ASSERT_EQ(avro_file_writer_create_with_codec(path.c_str(), handle.get(), &file_writer, codec, 2048), 0)
        << avro_strerror();
    ASSERT_OK_AND_ASSIGN(AvroGenericValue value, AvroGenericValue::Make(handle.get()));
    for (int64_t i = 0; i < 250; ++i) {
      avro_value_reset(value.get());
      ASSERT_OK(FillRow(value.get(), MakeRow(i)));
      ASSERT_EQ(avro_file_writer_append_value(file_writer, value.get()), 0) << avro_strerror();
    }
    avro_file_writer_close(file_writer);
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    ASSERT_OK_AND_ASSIGN(auto rows, ReadRows(bytes));
    ASSERT_EQ(rows.size(), 250u) << codec;
    for (int64_t i = 0; i < 250; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)], MakeRow(i)) << codec << " row " << i;
  }
}

void ExpectCorrupt(const std::string& bytes, const std::string& fragment) {
  auto rows = ReadRows(bytes);
  ASSERT_FALSE(rows.ok()) << "expected an error mentioning '" << fragment << "'";
  EXPECT_EQ(KindOf(rows.status()), ErrorKind::kCorrupt) << rows.status().ToString();
  EXPECT_NE(rows.status().message().find(fragment), std::string::npos) << rows.status().ToString();
  EXPECT_NE(rows.status().message().find("test.avro"), std::string::npos) << rows.status().ToString();
}

TEST(AvroFileTest, MalformedFramingIsCorruptAndNamesTheFile) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRows(50, AvroCodec::kNull, 400));
  std::string bad_magic = bytes;
  bad_magic[3] = '\x02';
  ExpectCorrupt(bad_magic, "bad magic");
  ExpectCorrupt(bytes.substr(0, 30), "header");
  std::string bad_sync = bytes;
  bad_sync[bad_sync.size() - 1] ^= 0x01;
  ExpectCorrupt(bad_sync, "sync marker mismatch");
  ExpectCorrupt(bytes.substr(0, bytes.size() - 5), "truncated");
}

// Records are checked against the writer schema before Avro C decodes them: Avro C 1.11 would
// otherwise allocate whatever length the bytes claim.
TEST(AvroFileTest, RecordsAreCheckedBeforeAvroCDecodesThem) {
  const char* schema = R"({"type":"record","name":"r","fields":[{"name":"b","type":"bytes"},
                                                               {"name":"u","type":["null","int"]}]})";
  AvroFileWriterOptions options;
  options.codec = AvroCodec::kNull;
  ASSERT_OK_AND_ASSIGN(auto writer, AvroFileWriter::Make(schema, {}, options));
  avro_value_t* record = writer->NewRecord();
  ASSERT_OK_AND_ASSIGN(auto b, MutableField(record, 0));
  ASSERT_OK(WriteBytes(&b, "abc"));
  ASSERT_OK_AND_ASSIGN(auto u, MutableField(record, 1));
  ASSERT_OK(SetNullBranch(&u));
  ASSERT_OK(writer->Append());
  ASSERT_OK_AND_ASSIGN(std::string bytes, writer->Finish());
  // The block is: count 1, size 5, then 0x06 'a' 'b' 'c' (bytes of length 3) and 0x00 (null branch).
  const size_t at = bytes.find(std::string("\x06" "abc\x00", 5));
  ASSERT_NE(at, std::string::npos);
  auto read_with = [&](std::vector<std::pair<size_t, char>> patches) {
    std::string damaged = bytes;
    for (const auto& [offset, byte] : patches) damaged[offset] = byte;
    return ReadRowsOf(damaged);
  };
  struct Case {
    std::vector<std::pair<size_t, char>> patches;
    const char* fragment;
  };
  const Case cases[] = {
      {{{at, '\x03'}}, "negative length -2"},
      {{{at, '\x7e'}}, "runs past the end of the block"},
      {{{at, '\x04'}, {at + 3, '\x00'}}, "1 bytes after its last record"},  // "ab", null, then a stray byte
      {{{at + 4, '\x04'}}, "union branch 2 is out of range"},
  };
  for (const auto& c : cases) {
    auto st = read_with(c.patches);
    ASSERT_FALSE(st.ok()) << c.fragment;
    EXPECT_EQ(KindOf(st), ErrorKind::kCorrupt) << st.ToString();
    EXPECT_NE(st.message().find(c.fragment), std::string::npos) << st.ToString();
  }
  EXPECT_TRUE(read_with({{at + 1, 'x'}}).ok());  // a different value, still well formed
}

TEST(AvroFileTest, UnknownCodecIsUnsupported) {
  ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRows(3, AvroCodec::kNull, 400));
  // Same length as "null", so the header stays well formed.
  const size_t at = bytes.find("null", bytes.find("avro.codec"));
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 4, "lzma");
  auto reader = AvroFileReader::Open(bytes, "test.avro");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(KindOf(reader.status()), ErrorKind::kUnsupported);
  EXPECT_NE(reader.status().message().find("lzma"), std::string::npos);
}

// Truncations and bit flips anywhere must give an error (or, where the damage happens to keep the
// file valid, records) and never crash or hang.
TEST(AvroFileTest, DamagedFilesFailCleanly) {
  std::mt19937_64 random(20261129);
  for (AvroCodec codec : {AvroCodec::kNull, AvroCodec::kDeflate, AvroCodec::kSnappy, AvroCodec::kZstandard}) {
    ASSERT_OK_AND_ASSIGN(std::string bytes, WriteRows(60, codec, 500));
    for (int iteration = 0; iteration < 150; ++iteration) {
      std::string damaged = bytes;
      if (iteration % 3 == 0) {
        damaged.resize(random() % bytes.size());
      } else {
        const int flips = 1 + static_cast<int>(random() % 4);
        for (int k = 0; k < flips; ++k) damaged[random() % damaged.size()] ^= static_cast<char>(1 << (random() % 8));
      }
      auto rows = ReadRows(damaged);
      if (!rows.ok()) {
        const ErrorKind kind = KindOf(rows.status());
        EXPECT_TRUE(kind == ErrorKind::kCorrupt || kind == ErrorKind::kUnsupported) << rows.status().ToString();
      }
      if (iteration % 3 == 0 && damaged.size() < bytes.size()) {
        EXPECT_FALSE(rows.ok() && rows->size() == 60u) << "a truncated file read completely";
      }
    }
  }
}

TEST(AvroCodecTest, ParseNames) {
  ASSERT_OK_AND_ASSIGN(auto codec, ParseAvroCodec("zstandard"));
  EXPECT_EQ(codec, AvroCodec::kZstandard);
  auto xz = ParseAvroCodec("xz");
  ASSERT_FALSE(xz.ok());
  EXPECT_EQ(KindOf(xz.status()), ErrorKind::kUnsupported);
}

TEST(AvroCodecTest, SnappyChecksumIsTheStandardCrc32) {
  // CRC-32 (IEEE) check value from the CRC catalogue.
  EXPECT_EQ(arrow::internal::crc32(0, "123456789", 9), 0xCBF43926u);
  ASSERT_OK_AND_ASSIGN(std::string block, CompressAvroBlock(AvroCodec::kSnappy, "123456789"));
  ASSERT_GE(block.size(), 4u);
  EXPECT_EQ(block.substr(block.size() - 4), std::string("\xCB\xF4\x39\x26", 4));
  std::string damaged = block;
  damaged[damaged.size() - 1] ^= 1;
  auto result = DecompressAvroBlock(AvroCodec::kSnappy, damaged, 1 << 20);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("checksum"), std::string::npos);
}

TEST(AvroCodecTest, DeflateIsRawAndTruncationIsCorrupt) {
  const std::string data(10000, 'x');
  ASSERT_OK_AND_ASSIGN(std::string block, CompressAvroBlock(AvroCodec::kDeflate, data));
  // Raw DEFLATE has no zlib (0x78) or gzip (0x1f 0x8b) header.
  ASSERT_FALSE(block.empty());
  EXPECT_NE(static_cast<unsigned char>(block[0]), 0x78);
  EXPECT_NE(static_cast<unsigned char>(block[0]), 0x1f);
  ASSERT_OK_AND_ASSIGN(std::string back, DecompressAvroBlock(AvroCodec::kDeflate, block, 1 << 20));
  EXPECT_EQ(back, data);
  auto truncated = DecompressAvroBlock(AvroCodec::kDeflate, block.substr(0, block.size() / 2), 1 << 20);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(KindOf(truncated.status()), ErrorKind::kCorrupt);
}

TEST(AvroCodecTest, ExpansionBeyondTheLimitIsRefused) {
  const std::string data(1 << 20, '\0');
  for (AvroCodec codec : {AvroCodec::kDeflate, AvroCodec::kZstandard, AvroCodec::kSnappy}) {
    ASSERT_OK_AND_ASSIGN(std::string block, CompressAvroBlock(codec, data));
    auto limited = DecompressAvroBlock(codec, block, 64 * 1024);
    ASSERT_FALSE(limited.ok()) << AvroCodecName(codec);
    EXPECT_EQ(KindOf(limited.status()), ErrorKind::kCorrupt);
    ASSERT_OK_AND_ASSIGN(std::string full, DecompressAvroBlock(codec, block, 2 << 20));
    EXPECT_EQ(full, data);
  }
}

}  // namespace
}  // namespace lakesync::avro
