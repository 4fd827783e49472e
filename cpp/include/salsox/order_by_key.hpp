// The order of the draws by their entropy, for ID's and NID's scans (entropy_scorer.hpp): a
// stable radix sort of the keys' bit patterns, which for doubles >= +0 order as the values do
// (it runs after every change of the allocated items, where a comparison sort showed).
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace salsox {

// A key's bit pattern and its index, as the sort moves them.
struct KeyedIndex {
  std::uint64_t bits;
  std::int64_t index;
};

// order = 0..n-1 sorted by key (doubles >= +0, no NaN), ties by index (as std::sort with the
// comparison (key[x], x) < (key[y], y)). Least significant byte first, skipping the bytes that
// every key shares; a and b are the caller's scratch (n each).
inline void order_by_key(const double* key, std::int64_t n, std::vector<std::int64_t>& order,
                         std::vector<KeyedIndex>& a, std::vector<KeyedIndex>& b) {
  const auto N = static_cast<std::size_t>(n);
  a.resize(N);
  b.resize(N);
  std::array<std::array<std::int64_t, 256>, 8> count{};
  for (std::size_t h = 0; h < N; ++h) {
    std::uint64_t bits;
    std::memcpy(&bits, key + h, sizeof bits);
    a[h] = {bits, static_cast<std::int64_t>(h)};
    for (int d = 0; d < 8; ++d) ++count[static_cast<std::size_t>(d)][(bits >> (8 * d)) & 0xff];
  }
  for (int d = 0; d < 8; ++d) {
    auto& c = count[static_cast<std::size_t>(d)];
    if (N == 0 || c[(a[0].bits >> (8 * d)) & 0xff] == n) continue;  // one value of this byte
    std::int64_t at = 0;
    for (auto& x : c) {
      const std::int64_t k = x;
      x = at;
      at += k;
    }
    for (const KeyedIndex& it : a) b[static_cast<std::size_t>(c[(it.bits >> (8 * d)) & 0xff]++)] = it;
    a.swap(b);
  }
  order.resize(N);
  for (std::size_t r = 0; r < N; ++r) order[r] = a[r].index;
}

}  // namespace salsox
