// Delta checkpoints (Parquet): actions read from arbitrary bytes as a checkpoint file. Parquet itself
// is Arrow's (not instrumented); the harness covers lakesync's reading of what Arrow returns.
#include <arrow/buffer.h>
#include <arrow/io/memory.h>

#include <cstdint>

#include "lakesync/delta/log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buffer = std::make_shared<arrow::Buffer>(data, static_cast<int64_t>(size));
  lakesync::delta::LogFile file;
  file.version = 10;
  file.location = "/fuzz/_delta_log/00000000000000000010.checkpoint.parquet";
  (void)lakesync::delta::ParseParquetActions(std::make_shared<arrow::io::BufferReader>(buffer), file);
  return 0;
}
