#pragma once
// Whole files as text, and a stable hash of text for cache and point keys.
#include <string>

namespace dfsim {

// The bytes of `path`, or "" when it cannot be read (callers that must know check first).
std::string read_text_file(const std::string& path);

// 64-bit FNV-1a of `text` as 16 hex digits: the same on every machine and run.
std::string hash_hex(const std::string& text);

}  // namespace dfsim
