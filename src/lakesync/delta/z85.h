// Z85 (ZeroMQ RFC 32), the text encoding Delta uses for inline deletion vectors and for the UUIDs of
// deletion-vector file names (PROTOCOL.md "Deletion Vector Descriptor Schema").
#pragma once

#include <string>
#include <string_view>

#include "lakesync/common/status.h"

namespace lakesync::delta {

// Decodes Z85 text: every 5 characters give one 32-bit big-endian word (4 bytes).
// A last group starting with k '#' characters is a short tail of 4 - k bytes (the padding of the
// Rust z85 crate, which delta-kernel-rs writes); any other group over 32 bits keeps its low 32
// bits, as Delta's Java decoders do.
// Returns Corrupt when the length is not a multiple of 5 or a character is outside the alphabet.
Result<std::string> Z85Decode(std::string_view text);

// Encodes bytes whose length is a multiple of 4 (tests and DV writers).
Result<std::string> Z85Encode(std::string_view bytes);

}  // namespace lakesync::delta
