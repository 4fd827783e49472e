// Rows of per-chunk partial sums, each on cache lines of its own: chunks of a score pass summed
// by different threads at once (Crew, threads.hpp) would otherwise bounce a shared line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace salsox {

// `rows` rows of `width` values in `buf` (grown as needed), `stride` elements apart (set here:
// width rounded up to whole 64-byte lines); returns the line-aligned first row.
template <class T>
inline T* line_rows(std::vector<T>& buf, std::int64_t rows, std::int64_t width, std::int64_t& stride) {
  constexpr std::size_t kLine = 64;
  constexpr auto per_line = static_cast<std::int64_t>(kLine / sizeof(T));
  stride = (width + per_line - 1) / per_line * per_line;
  const auto need = static_cast<std::size_t>(rows * stride + per_line);
  if (buf.size() < need) buf.resize(need);
  const auto addr = reinterpret_cast<std::uintptr_t>(buf.data());
  return buf.data() + ((kLine - addr % kLine) % kLine) / sizeof(T);
}

}  // namespace salsox
