// hex64: how heaplab prints a 64-bit word (pointers, bitmaps, cookies, digests) in every message:
// "0x" and 16 lower-case hex digits. Host only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace heaplab::core {

inline std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace heaplab::core
