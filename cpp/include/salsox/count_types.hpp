// Small helpers of the count tables (count_table.hpp): the count type for n items and the
// lowest set bit of a word.
#pragma once
#include <cstdint>
#include <limits>

namespace salsox {

// Index of the lowest set bit of a nonzero word.
inline int ctz64(std::uint64_t x) { return __builtin_ctzll(x); }

// The per-draw visitor of a count table's add and remove that does nothing (see
// CountTable::add).
struct NoVisit {
  template <class... A>
  void operator()(A...) const {}
};

// Calls f(Count{}) with the count type of tables of n items: 8 bits up to 255 items (the
// tables of the usual problems stay in L1), 32 bits beyond. No 16-bit width: a row of up to 16
// slots is one cache line at either width, and each width is a set of instantiations of every
// scorer and search to compile.
template <class F>
decltype(auto) with_count_type(std::int64_t n, F&& f) {
  if (n <= std::numeric_limits<std::uint8_t>::max()) return f(std::uint8_t{});
  return f(std::int32_t{});
}

}  // namespace salsox
