#include <arrow/io/memory.h>
#include <arrow/util/compression.h>
#include <gtest/gtest.h>

#include "lakesync/formats/puffin/compression_internal.h"
#include "lakesync/formats/puffin/puffin_reader.h"
#include "lakesync/formats/puffin/puffin_writer.h"
#include "puffin_test_util.h"

namespace lakesync::puffin {
namespace {

using testing::ReadCorpus;

std::string View(const arrow::Buffer& buffer) { return buffer.ToString(); }

// Writes blobs with a fresh writer and returns the file bytes and the writer's summary.
struct Written {
  std::string bytes;
  PuffinFileInfo info;
};

Result<Written> WriteFile(const std::vector<std::pair<PuffinBlob, std::string>>& blobs,
                          PuffinWriterOptions options = {}) {
  ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  ARROW_ASSIGN_OR_RAISE(auto writer, PuffinWriter::Make(sink, std::move(options)));
  for (const auto& [blob, data] : blobs) ARROW_RETURN_NOT_OK(writer->AddBlob(blob, data).status());
  Written out;
  ARROW_ASSIGN_OR_RAISE(out.info, writer->Finish());
  ARROW_ASSIGN_OR_RAISE(auto buffer, sink->Finish());
  out.bytes = buffer->ToString();
  return out;
}

void ExpectOpenFails(const std::string& bytes, ErrorKind kind, const std::string& fragment,
                     PuffinReaderOptions options = {}) {
  auto result = PuffinReader::OpenBytes(bytes, options);
  ASSERT_FALSE(result.ok()) << "expected failure mentioning '" << fragment << "'";
  EXPECT_EQ(KindOf(result.status()), kind) << result.status().ToString();
  EXPECT_NE(result.status().message().find(fragment), std::string::npos) << result.status().ToString();
}

void PutU32LE(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

// Java's writer output for a file without blobs or properties.
TEST(PuffinFileTest, EmptyFileMatchesJavaByteForByte) {
  ASSERT_OK_AND_ASSIGN(Written written, WriteFile({}));
  EXPECT_EQ(written.bytes, ReadCorpus("empty-puffin-uncompressed.bin"));
  EXPECT_EQ(written.info.file_size_in_bytes, static_cast<int64_t>(written.bytes.size()));
  EXPECT_EQ(written.info.footer_size_in_bytes, static_cast<int64_t>(written.bytes.size()) - 4);
  EXPECT_TRUE(written.info.blobs.empty());
}

TEST(PuffinFileTest, CreatedByComesFromTheVersionOption) {
  PuffinWriterOptions options;
  options.lakesync_version = "9.8.7";
  ASSERT_OK_AND_ASSIGN(Written written, WriteFile({}, options));
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(written.bytes));
  EXPECT_EQ(reader->metadata().properties.at("created-by"), "lakesync 9.8.7");

  PuffinWriterOptions both;
  both.lakesync_version = "1";
  both.properties["created-by"] = "someone else";
  ASSERT_OK_AND_ASSIGN(auto sink, arrow::io::BufferOutputStream::Create());
  EXPECT_EQ(KindOf(PuffinWriter::Make(sink, both).status()), ErrorKind::kInvalidArgument);
}

TEST(PuffinFileTest, ReadsJavaSampleFiles) {
  ASSERT_OK_AND_ASSIGN(auto plain, PuffinReader::OpenBytes(ReadCorpus("sample-metric-data-uncompressed.bin")));
  ASSERT_OK_AND_ASSIGN(auto zstd, PuffinReader::OpenBytes(ReadCorpus("sample-metric-data-compressed-zstd.bin")));
  ASSERT_EQ(plain->blobs().size(), 2u);
  ASSERT_EQ(zstd->blobs().size(), 2u);
  EXPECT_FALSE(plain->footer_compressed());
  EXPECT_FALSE(zstd->footer_compressed());
  EXPECT_EQ(plain->metadata().properties, zstd->metadata().properties);
  EXPECT_EQ(plain->metadata().properties.count("created-by"), 1u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const BlobMetadata& a = plain->blobs()[i];
    const BlobMetadata& b = zstd->blobs()[i];
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.fields, b.fields);
    EXPECT_EQ(a.snapshot_id, b.snapshot_id);
    EXPECT_EQ(a.sequence_number, b.sequence_number);
    EXPECT_FALSE(a.compression_codec.has_value());
    EXPECT_EQ(b.compression_codec, "zstd");
    ASSERT_OK_AND_ASSIGN(auto plain_bytes, plain->ReadBlob(i));
    ASSERT_OK_AND_ASSIGN(auto zstd_bytes, zstd->ReadBlob(i));
    EXPECT_EQ(plain_bytes->size(), a.length);
    EXPECT_NE(zstd_bytes->size(), b.length);  // decompressed, so not the stored length
    EXPECT_EQ(View(*zstd_bytes), View(*plain_bytes));
  }
  EXPECT_NE(plain->blobs()[0].type, plain->blobs()[1].type);
}

// Rewriting the blobs of Java's uncompressed sample with the same metadata must give Java's bytes:
// blob placement, footer JSON (key order, omitted keys) and footer framing all match.
TEST(PuffinFileTest, RewritingJavaSampleReproducesItsBytes) {
  const std::string original = ReadCorpus("sample-metric-data-uncompressed.bin");
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(original));
  std::vector<std::pair<PuffinBlob, std::string>> blobs;
  for (size_t i = 0; i < reader->blobs().size(); ++i) {
    const BlobMetadata& m = reader->blobs()[i];
    PuffinBlob blob{m.type, m.fields, m.snapshot_id, m.sequence_number, m.properties, PuffinCodec::kNone};
    ASSERT_OK_AND_ASSIGN(auto data, reader->ReadBlob(i));
    blobs.emplace_back(blob, View(*data));
  }
  PuffinWriterOptions options;
  options.properties = reader->metadata().properties;
  ASSERT_OK_AND_ASSIGN(Written written, WriteFile(blobs, options));
  EXPECT_EQ(written.bytes, original);
  EXPECT_EQ(written.info.blobs, reader->blobs());
  EXPECT_EQ(written.info.footer_size_in_bytes, reader->footer_size());
}

TEST(PuffinFileTest, RoundTripWithEveryCodecAndCompressedFooter) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "row " + std::to_string(i % 97) + ";";
  const std::vector<std::pair<PuffinBlob, std::string>> blobs = {
      {PuffinBlob{"apache-datasketches-theta-v1", {1, 2}, 7, 3, {{"ndv", "42"}}, PuffinCodec::kZstd}, big},
      {PuffinBlob{"some-blob", {5}, 7, 3, {}, PuffinCodec::kLz4}, big.substr(0, 5000)},
      {PuffinBlob{"raw", {}, -1, -1, {}, PuffinCodec::kNone}, "raw bytes \x01\x02"},
      {PuffinBlob{"empty", {}, -1, -1, {}, PuffinCodec::kZstd}, ""},
      {PuffinBlob{"empty-lz4", {}, -1, -1, {}, PuffinCodec::kLz4}, ""},
  };
  for (bool compress_footer : {false, true}) {
    SCOPED_TRACE(compress_footer);
    PuffinWriterOptions options;
    options.lakesync_version = "0.1.0";
    options.properties["note"] = "caf\xC3\xA9";  // UTF-8 survives the footer
    options.compress_footer = compress_footer;
    ASSERT_OK_AND_ASSIGN(Written written, WriteFile(blobs, options));
    EXPECT_EQ(written.info.file_size_in_bytes, static_cast<int64_t>(written.bytes.size()));
    ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(written.bytes));
    EXPECT_EQ(reader->footer_compressed(), compress_footer);
    EXPECT_EQ(reader->footer_size(), written.info.footer_size_in_bytes);
    EXPECT_EQ(reader->blobs(), written.info.blobs);
    EXPECT_EQ(reader->metadata().properties.at("note"), "caf\xC3\xA9");
    EXPECT_LT(written.info.blobs[0].length, static_cast<int64_t>(big.size()));  // really compressed
    int64_t expected_offset = 4;
    for (size_t i = 0; i < blobs.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(written.info.blobs[i].offset, expected_offset);
      expected_offset += written.info.blobs[i].length;
      ASSERT_OK_AND_ASSIGN(auto data, reader->ReadBlob(i));
      EXPECT_EQ(View(*data), blobs[i].second);
      ASSERT_OK_AND_ASSIGN(auto by_metadata, reader->ReadBlob(written.info.blobs[i]));
      EXPECT_EQ(View(*by_metadata), blobs[i].second);
    }
    EXPECT_EQ(expected_offset, written.info.file_size_in_bytes - written.info.footer_size_in_bytes);

    // A known footer size is used and checked.
    PuffinReaderOptions known;
    known.footer_size = written.info.footer_size_in_bytes;
    known.file_size = written.info.file_size_in_bytes;
    ASSERT_OK(PuffinReader::OpenBytes(written.bytes, known).status());
    known.footer_size = written.info.footer_size_in_bytes + 1;
    ExpectOpenFails(written.bytes, ErrorKind::kCorrupt, "footer", known);

    // Memory limits refuse oversized blobs (stored or decompressed) and footers.
    PuffinReaderOptions small;
    small.max_blob_size = 4096;
    ASSERT_OK_AND_ASSIGN(auto limited, PuffinReader::OpenBytes(written.bytes, small));
    EXPECT_EQ(KindOf(limited->ReadBlob(0).status()), ErrorKind::kInvalidArgument);  // zstd, big when inflated
    EXPECT_EQ(KindOf(limited->ReadBlob(1).status()), ErrorKind::kInvalidArgument);  // lz4, 5000 bytes inflated
    ASSERT_OK(limited->ReadBlob(2).status());
    small.max_footer_payload_size = 10;
    ExpectOpenFails(written.bytes, ErrorKind::kInvalidArgument, "max_footer_payload_size", small);
  }
}

TEST(PuffinFileTest, CompressedFramesRecordTheirContentSize) {
  const std::string data(3000, 'x');
  for (PuffinCodec codec : {PuffinCodec::kZstd, PuffinCodec::kLz4}) {
    SCOPED_TRACE(PuffinCodecName(codec));
    ASSERT_OK_AND_ASSIGN(std::string frame, internal::CompressFrame(codec, data));
    EXPECT_EQ(internal::FrameContentSize(codec, frame), std::optional<uint64_t>(data.size()));
    // Arrow's one-shot decoder (the lz4/zstd libraries themselves) accepts the frame, which for LZ4
    // also checks the header checksum we recomputed.
    ASSERT_OK_AND_ASSIGN(auto codec_impl,
                         arrow::util::Codec::Create(codec == PuffinCodec::kLz4 ? arrow::Compression::LZ4_FRAME
                                                                               : arrow::Compression::ZSTD));
    std::string out(data.size(), '\0');
    ASSERT_OK_AND_ASSIGN(int64_t n, codec_impl->Decompress(static_cast<int64_t>(frame.size()),
                                                           reinterpret_cast<const uint8_t*>(frame.data()),
                                                           static_cast<int64_t>(out.size()),
                                                           reinterpret_cast<uint8_t*>(out.data())));
    EXPECT_EQ(n, static_cast<int64_t>(data.size()));
    EXPECT_EQ(out, data);
    // Trailing bytes and truncation are corrupt.
    EXPECT_EQ(KindOf(internal::DecompressFrame(codec, frame + "junk", 1 << 20).status()), ErrorKind::kCorrupt);
    EXPECT_EQ(KindOf(internal::DecompressFrame(codec, frame.substr(0, frame.size() - 3), 1 << 20).status()),
              ErrorKind::kCorrupt);
    // Declared content above the limit is refused before decompressing.
    EXPECT_EQ(KindOf(internal::DecompressFrame(codec, frame, 100).status()), ErrorKind::kInvalidArgument);
  }
}

// The LZ4 decoder must reject a wrong header checksum; otherwise the test above would not prove that
// our XXH32 is right.
TEST(PuffinFileTest, Lz4HeaderChecksumIsVerifiedByTheDecoder) {
  ASSERT_OK_AND_ASSIGN(std::string frame, internal::CompressFrame(PuffinCodec::kLz4, std::string(100, 'y')));
  const size_t checksum_at = 4 + 2 + 8;  // magic, FLG, BD, content size
  frame[checksum_at] ^= 0x5A;
  EXPECT_EQ(KindOf(internal::DecompressFrame(PuffinCodec::kLz4, frame, 1 << 20).status()), ErrorKind::kCorrupt);
}

TEST(PuffinFileTest, DeletionVectorsCannotBeCompressed) {
  ASSERT_OK_AND_ASSIGN(auto sink, arrow::io::BufferOutputStream::Create());
  ASSERT_OK_AND_ASSIGN(auto writer, PuffinWriter::Make(sink));
  PuffinBlob blob{"deletion-vector-v1", {2147483645}, -1, -1, {}, PuffinCodec::kZstd};
  EXPECT_EQ(KindOf(writer->AddBlob(blob, "x").status()), ErrorKind::kInvalidArgument);
  ASSERT_OK(writer->Finish().status());
  EXPECT_EQ(KindOf(writer->Finish().status()), ErrorKind::kInvalidArgument);
  PuffinBlob late;
  late.type = "t";
  EXPECT_EQ(KindOf(writer->AddBlob(late, "x").status()), ErrorKind::kInvalidArgument);
}

TEST(PuffinFileTest, RefusesAStreamThatIsNotAtTheStart) {
  ASSERT_OK_AND_ASSIGN(auto sink, arrow::io::BufferOutputStream::Create());
  ASSERT_OK(sink->Write("abc", 3));
  EXPECT_EQ(KindOf(PuffinWriter::Make(sink).status()), ErrorKind::kInvalidArgument);
}

class DamagedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(Written written,
                         WriteFile({{PuffinBlob{"a", {1}, 1, 1, {}, PuffinCodec::kNone}, "0123456789"},
                                    {PuffinBlob{"deletion-vector-v1", {2}, -1, -1, {}, PuffinCodec::kNone}, "abc"}}));
    bytes_ = written.bytes;
    size_ = bytes_.size();
    payload_size_ = static_cast<size_t>(written.info.footer_size_in_bytes) - 16;
    footer_start_ = size_ - static_cast<size_t>(written.info.footer_size_in_bytes);
  }
  // Replaces the footer payload with `json`, keeping the framing consistent.
  std::string WithPayload(const std::string& json) const {
    std::string out = bytes_.substr(0, footer_start_ + 4) + json + bytes_.substr(size_ - 12);
    PutU32LE(&out, out.size() - 12, static_cast<uint32_t>(json.size()));
    return out;
  }
  std::string bytes_;
  size_t size_ = 0;
  size_t payload_size_ = 0;
  size_t footer_start_ = 0;
};

TEST_F(DamagedFileTest, TooSmall) {
  ExpectOpenFails(bytes_.substr(0, 19), ErrorKind::kCorrupt, "smaller than");
  ExpectOpenFails("", ErrorKind::kCorrupt, "smaller than");
}

TEST_F(DamagedFileTest, TrailingMagic) {
  std::string bad = bytes_;
  bad[size_ - 1] = 'X';
  ExpectOpenFails(bad, ErrorKind::kCorrupt, "Puffin footer magic mismatch at offset " + std::to_string(size_ - 4));
}

TEST_F(DamagedFileTest, FooterStartMagic) {
  std::string bad = bytes_;
  bad[footer_start_] = 'X';
  ExpectOpenFails(bad, ErrorKind::kCorrupt, "Puffin footer magic mismatch at offset " + std::to_string(footer_start_));
}

TEST_F(DamagedFileTest, HeaderMagic) {
  std::string bad = bytes_;
  bad[0] = 'Q';
  ExpectOpenFails(bad, ErrorKind::kCorrupt, "Puffin header magic mismatch at offset 0");
}

TEST_F(DamagedFileTest, PayloadSize) {
  std::string negative = bytes_;
  PutU32LE(&negative, size_ - 12, 0x80000000u);
  ExpectOpenFails(negative, ErrorKind::kCorrupt, "negative");
  std::string too_big = bytes_;
  PutU32LE(&too_big, size_ - 12, static_cast<uint32_t>(size_));
  ExpectOpenFails(too_big, ErrorKind::kCorrupt, "does not fit");
  std::string off_by_one = bytes_;
  PutU32LE(&off_by_one, size_ - 12, static_cast<uint32_t>(payload_size_ + 1));
  ExpectOpenFails(off_by_one, ErrorKind::kCorrupt, "magic mismatch");
}

TEST_F(DamagedFileTest, ReservedFlags) {
  std::string bad = bytes_;
  bad[size_ - 8] = 0x02;
  ExpectOpenFails(bad, ErrorKind::kUnsupported, "reserved bits");
  bad = bytes_;
  bad[size_ - 6] = 0x01;
  ExpectOpenFails(bad, ErrorKind::kUnsupported, "reserved bits");
}

TEST_F(DamagedFileTest, CompressedFlagOnPlainPayload) {
  std::string bad = bytes_;
  bad[size_ - 8] = 0x01;
  ExpectOpenFails(bad, ErrorKind::kCorrupt, "decompressing the Puffin footer payload");
}

TEST_F(DamagedFileTest, BlobRanges) {
  const std::string footer_start = std::to_string(footer_start_);
  ExpectOpenFails(
      WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,"offset":4,"length":1},)"
                  R"({"type":"deletion-vector-v1","fields":[],"snapshot-id":-1,"sequence-number":-1,)"
                  R"("offset":10,"length":100000}]})"),
      ErrorKind::kCorrupt, "blob 1 (deletion-vector-v1) extends past end of file");
  ExpectOpenFails(
      WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,"offset":10,)"
                  R"("length":)" + std::to_string(footer_start_ - 9) + "}]}"),
      ErrorKind::kCorrupt, "blob 0 (a) overlaps the footer");
  ExpectOpenFails(
      WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,"offset":2,"length":1}]})"),
      ErrorKind::kCorrupt, "inside the 4-byte header magic");
  ExpectOpenFails(WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,)"
                              R"("offset":9223372036854775807,"length":9223372036854775807}]})"),
                  ErrorKind::kCorrupt, "extends past end of file");
}

TEST_F(DamagedFileTest, FooterJson) {
  ExpectOpenFails(WithPayload("{\"blobs\":[}"), ErrorKind::kCorrupt, "not valid JSON");
  ExpectOpenFails(WithPayload("[]"), ErrorKind::kCorrupt, "must be a JSON object");
  ExpectOpenFails(WithPayload("{}"), ErrorKind::kCorrupt, "missing required key 'blobs'");
  ExpectOpenFails(WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"offset":4,"length":1}]})"),
                  ErrorKind::kCorrupt, "blob 0 is missing required key 'sequence-number'");
  ExpectOpenFails(WithPayload(R"({"blobs":[{"type":"a","fields":["x"],"snapshot-id":1,"sequence-number":1,)"
                              R"("offset":4,"length":1}]})"),
                  ErrorKind::kCorrupt, "blob 0 (a) key 'fields' must be an integer");
  ExpectOpenFails(WithPayload(R"({"blobs":[{"type":"a","fields":[4294967296],"snapshot-id":1,"sequence-number":1,)"
                              R"("offset":4,"length":1}]})"),
                  ErrorKind::kCorrupt, "does not fit a 32-bit integer");
  ExpectOpenFails(WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,)"
                              R"("offset":4,"length":-1}]})"),
                  ErrorKind::kCorrupt, "negative length");
  ExpectOpenFails(WithPayload(R"({"blobs":[],"properties":{"k":1}})"), ErrorKind::kCorrupt,
                  "property 'k' must be a string");
  // A number no JSON number type holds is out_of_range inside the JSON library, not a parse error:
  // it used to escape as an exception and terminate the process (found by fuzz/fuzz_puffin).
  ExpectOpenFails(WithPayload(R"({"blobs":[{"type":"a","fields":[],"snapshot-id":21E7483645,"sequence-number":1,)"
                              R"("offset":4,"length":1}]})"),
                  ErrorKind::kCorrupt, "not valid JSON");
  // Unknown keys are tolerated for forward compatibility.
  ASSERT_OK(PuffinReader::OpenBytes(WithPayload(R"({"blobs":[],"future":{"x":[1]}})")).status());
}

TEST_F(DamagedFileTest, UnknownCodecFailsOnlyWhenTheBlobIsRead) {
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(WithPayload(
                                        R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,)"
                                        R"("offset":4,"length":3,"compression-codec":"snappy"},)"
                                        R"({"type":"b","fields":[],"snapshot-id":1,"sequence-number":1,)"
                                        R"("offset":7,"length":3}]})")));
  auto bad = reader->ReadBlob(0);
  EXPECT_EQ(KindOf(bad.status()), ErrorKind::kUnsupported);
  EXPECT_NE(bad.status().message().find("snappy"), std::string::npos) << bad.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto good, reader->ReadBlob(1));
  EXPECT_EQ(View(*good), "345");
  EXPECT_EQ(KindOf(reader->ReadBlob(2).status()), ErrorKind::kInvalidArgument);
}

TEST_F(DamagedFileTest, CorruptCompressedBlob) {
  ASSERT_OK_AND_ASSIGN(auto reader, PuffinReader::OpenBytes(WithPayload(
                                        R"({"blobs":[{"type":"a","fields":[],"snapshot-id":1,"sequence-number":1,)"
                                        R"("offset":4,"length":10,"compression-codec":"zstd"}]})")));
  auto bad = reader->ReadBlob(0);
  EXPECT_EQ(KindOf(bad.status()), ErrorKind::kCorrupt) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("blob 0 (a)"), std::string::npos) << bad.status().ToString();
}

}  // namespace
}  // namespace lakesync::puffin
