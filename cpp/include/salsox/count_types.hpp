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

// Calls f(Count{}) with the narrowest count type that holds counts up to n.
template <class F>
decltype(auto) with_count_type(std::int64_t n, F&& f) {
  if (n <= std::numeric_limits<std::uint8_t>::max()) return f(std::uint8_t{});
  if (n <= std::numeric_limits<std::uint16_t>::max()) return f(std::uint16_t{});
  return f(std::int32_t{});
}

}  // namespace salsox
