// dv_probe: the puffin module's codecs from the command line, for tests/interop/test_puffin_oracle.py,
// which holds them against independent decoders (pyroaring, zlib, pyiceberg).
//
//   dv_probe decode-dv FILE [EXPECTED_CARDINALITY]   positions of a deletion-vector-v1 blob, one per line
//   dv_probe decode-roaring64 FILE                   positions of a bare portable Roaring64 bitmap
//   dv_probe encode-dv OUT [POS...|-]                write a deletion-vector-v1 blob
//   dv_probe encode-roaring64 OUT [sparse] [POS...|-]  write a bare portable Roaring64 bitmap
//   dv_probe puffin-footer FILE                      the footer as lakesync parsed it, re-serialized as JSON
//   dv_probe puffin-blob FILE INDEX OUT              blob INDEX, decompressed, written to OUT
//   dv_probe write-puffin OUT CODEC TYPE DATA_FILE... one blob per DATA_FILE (codec none|zstd|lz4), footer
//                                                    summary as JSON on stdout
//   dv_probe write-dv-puffin OUT                     DVs from stdin lines "PATH<TAB>POS POS ...", summary JSON
//
// POS is a decimal position or a half-open range A:B; "-" reads the same tokens from stdin.
// Errors go to stderr with exit status 1.
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "lakesync/common/status.h"
#include "lakesync/formats/puffin/deletion_vector.h"
#include "lakesync/formats/puffin/deletion_vector_file.h"
#include "lakesync/formats/puffin/positions_bitmap.h"
#include "lakesync/formats/puffin/puffin_reader.h"
#include "lakesync/formats/puffin/puffin_writer.h"
#include "lakesync/formats/puffin/roaring64_portable.h"

namespace lakesync::puffin {
namespace {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IOError("cannot open {}", path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Status WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return IOError("cannot write {}", path);
  return Status::OK();
}

Status AddToken(PositionBitmap* bitmap, const std::string& token) {
  try {
    size_t colon = token.find(':');
    if (colon == std::string::npos) return bitmap->Add(std::stoll(token));
    return bitmap->AddRange(std::stoll(token.substr(0, colon)), std::stoll(token.substr(colon + 1)));
  } catch (const std::exception&) {
    return InvalidArgument("not a position or range: '{}'", token);
  }
}

Result<PositionBitmap> ParsePositions(const std::vector<std::string>& args) {
  PositionBitmap bitmap;
  for (const std::string& arg : args) {
    if (arg == "-") {
      std::string token;
      while (std::cin >> token) ARROW_RETURN_NOT_OK(AddToken(&bitmap, token));
    } else {
      ARROW_RETURN_NOT_OK(AddToken(&bitmap, arg));
    }
  }
  return bitmap;
}

void PrintPositions(const PositionBitmap& bitmap) {
  std::string out;
  bitmap.ForEach([&](int64_t p) {
    out += std::to_string(p);
    out.push_back('\n');
  });
  std::cout << out;
}

nlohmann::json BlobJson(const BlobMetadata& blob) {
  nlohmann::json j = {{"type", blob.type},     {"fields", blob.fields}, {"snapshot-id", blob.snapshot_id},
                      {"sequence-number", blob.sequence_number}, {"offset", blob.offset}, {"length", blob.length},
                      {"properties", blob.properties}};
  if (blob.compression_codec) j["compression-codec"] = *blob.compression_codec;
  return j;
}

Result<PuffinCodec> CodecArg(const std::string& name) {
  if (name == "none") return PuffinCodec::kNone;
  return ParsePuffinCodec(name);
}

Status Run(const std::vector<std::string>& args) {
  if (args.empty()) return InvalidArgument("usage: dv_probe COMMAND ... (see the comment in dv_probe.cc)");
  const std::string& command = args[0];
  auto need = [&](size_t n) -> Status {
    if (args.size() < n + 1) return InvalidArgument("{} needs {} arguments", command, n);
    return Status::OK();
  };
  if (command == "decode-dv") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(std::string bytes, ReadFile(args[1]));
    std::optional<int64_t> cardinality;
    if (args.size() > 2) cardinality = std::stoll(args[2]);
    LS_ASSIGN_OR_RAISE_CTX(PositionBitmap bitmap, DeserializeDeletionVector(bytes, cardinality), "{}", args[1]);
    PrintPositions(bitmap);
    return Status::OK();
  }
  if (command == "decode-roaring64") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(std::string bytes, ReadFile(args[1]));
    LS_ASSIGN_OR_RAISE_CTX(PositionBitmap bitmap, DeserializeRoaring64Portable(bytes), "{}", args[1]);
    PrintPositions(bitmap);
    return Status::OK();
  }
  if (command == "encode-dv") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(PositionBitmap bitmap, ParsePositions({args.begin() + 2, args.end()}));
    ARROW_ASSIGN_OR_RAISE(std::string blob, SerializeDeletionVector(bitmap));
    return WriteFile(args[1], blob);
  }
  if (command == "encode-roaring64") {
    ARROW_RETURN_NOT_OK(need(1));
    Roaring64SerializeOptions options;
    auto first = args.begin() + 2;
    if (first != args.end() && *first == "sparse") {
      options.key_layout = Roaring64KeyLayout::kNonEmptyKeysOnly;
      ++first;
    }
    ARROW_ASSIGN_OR_RAISE(PositionBitmap bitmap, ParsePositions({first, args.end()}));
    ARROW_ASSIGN_OR_RAISE(std::string bytes, SerializeRoaring64Portable(bitmap, options));
    return WriteFile(args[1], bytes);
  }
  if (command == "puffin-footer") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(args[1]));
    LS_ASSIGN_OR_RAISE_CTX(auto reader, PuffinReader::Open(file), "{}", args[1]);
    nlohmann::json out = {{"blobs", nlohmann::json::array()},
                          {"properties", reader->metadata().properties},
                          {"file-size", reader->file_size()},
                          {"footer-size", reader->footer_size()},
                          {"footer-compressed", reader->footer_compressed()}};
    for (const BlobMetadata& blob : reader->blobs()) out["blobs"].push_back(BlobJson(blob));
    std::cout << out.dump() << "\n";
    return Status::OK();
  }
  if (command == "puffin-blob") {
    ARROW_RETURN_NOT_OK(need(3));
    ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(args[1]));
    LS_ASSIGN_OR_RAISE_CTX(auto reader, PuffinReader::Open(file), "{}", args[1]);
    ARROW_ASSIGN_OR_RAISE(auto blob, reader->ReadBlob(std::stoul(args[2])));
    return WriteFile(args[3], blob->ToString());
  }
  if (command == "write-puffin") {
    ARROW_RETURN_NOT_OK(need(4));
    ARROW_ASSIGN_OR_RAISE(PuffinCodec codec, CodecArg(args[2]));
    ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::FileOutputStream::Open(args[1]));
    PuffinWriterOptions options;
    options.lakesync_version = "probe";
    ARROW_ASSIGN_OR_RAISE(auto writer, PuffinWriter::Make(sink, options));
    for (size_t i = 4; i < args.size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(std::string data, ReadFile(args[i]));
      PuffinBlob blob;
      blob.type = args[3];
      blob.fields = {static_cast<int32_t>(i)};
      blob.snapshot_id = 1;
      blob.sequence_number = 1;
      blob.compression = codec;
      ARROW_RETURN_NOT_OK(writer->AddBlob(blob, data).status());
    }
    ARROW_ASSIGN_OR_RAISE(PuffinFileInfo info, writer->Finish());
    ARROW_RETURN_NOT_OK(sink->Close());
    nlohmann::json out = {{"blobs", nlohmann::json::array()},
                          {"file-size", info.file_size_in_bytes},
                          {"footer-size", info.footer_size_in_bytes}};
    for (const BlobMetadata& blob : info.blobs) out["blobs"].push_back(BlobJson(blob));
    std::cout << out.dump() << "\n";
    return Status::OK();
  }
  if (command == "write-dv-puffin") {
    ARROW_RETURN_NOT_OK(need(1));
    ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::FileOutputStream::Open(args[1]));
    DeletionVectorWriterOptions options;
    options.lakesync_version = "probe";
    ARROW_ASSIGN_OR_RAISE(auto writer, DeletionVectorWriter::Make(sink, options));
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line.empty()) continue;
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) return InvalidArgument("expected PATH<TAB>POSITIONS, got '{}'", line);
      std::istringstream tokens(line.substr(tab + 1));
      PositionBitmap bitmap;
      std::string token;
      while (tokens >> token) ARROW_RETURN_NOT_OK(AddToken(&bitmap, token));
      ARROW_RETURN_NOT_OK(writer->Add(line.substr(0, tab), bitmap));
    }
    ARROW_ASSIGN_OR_RAISE(DeletionVectorFile file, writer->Finish());
    ARROW_RETURN_NOT_OK(sink->Close());
    nlohmann::json out = {{"vectors", nlohmann::json::array()},
                          {"file-size", file.file_size_in_bytes},
                          {"footer-size", file.footer_size_in_bytes}};
    for (const WrittenDeletionVector& v : file.vectors) {
      out["vectors"].push_back({{"referenced-data-file", v.referenced_data_file},
                                {"content-offset", v.content_offset},
                                {"content-size-in-bytes", v.content_size_in_bytes},
                                {"cardinality", v.cardinality}});
    }
    std::cout << out.dump() << "\n";
    return Status::OK();
  }
  return InvalidArgument("unknown command '{}'", command);
}

}  // namespace
}  // namespace lakesync::puffin

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  lakesync::Status st;
  try {
    st = lakesync::puffin::Run(args);
  } catch (const std::exception& e) {
    // Only argument parsing (std::stoll and friends) throws here.
    st = lakesync::InvalidArgument("bad argument: {}", e.what());
  }
  if (!st.ok()) {
    std::cerr << "dv_probe: " << lakesync::ErrorKindName(lakesync::KindOf(st)) << ": " << st.message() << "\n";
    return 1;
  }
  return 0;
}
