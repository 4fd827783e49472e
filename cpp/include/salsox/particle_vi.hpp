// The VI of every draw to each of a few partitions ("particles", as in WASABI): an H x L matrix
// in O(H n) per particle, without any contingency table.
//
// VI(draw, c) = (D + E - 2 J) / n with D, E and J the sums of s log2 s over the draw's clusters,
// the particle's and the cells of their table. A particle cluster's cells are counted in kmax
// counters per draw indexed by draw label, then read back through the same items, over blocks
// of draws whose labels are contiguous in the item-major layout.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "count_loss.hpp"
#include "dispatch.hpp"
#include "draws.hpp"

namespace salsox {

// out[h * L + l] = VI(draw h, particle l) in bits, for particles given as L rows of n labels
// 0..K_l-1 (canonical or not, each in 0..n-1). Each value is computed by one thread in a fixed
// order, so the matrix does not depend on the thread count. Stops early (values left unset)
// when `interrupt` fires: the caller checks it.
template <class Label>
void particle_vi(const DrawsView<Label>& d, const std::int32_t* particles, std::int64_t L, double* out,
                 int n_jobs, Interrupt* interrupt = nullptr) {
  const std::int64_t n = d.n, H = d.H;
  const CountLoss vi = CountLoss::builtin(LossKind::VI, 1.0, 1.0, n);
  const std::vector<double>& g = vi.g_cell;  // s log2 s for s = 0..n

  // Each particle's items grouped by cluster (members[start[c] .. start[c + 1]]) and its E.
  struct Particle {
    std::vector<std::int64_t> members, start;
    double E = 0.0;
  };
  std::vector<Particle> parts(static_cast<std::size_t>(L));
  for (std::int64_t l = 0; l < L; ++l) {
    const std::int32_t* c = particles + l * n;
    Particle& p = parts[static_cast<std::size_t>(l)];
    std::int32_t K = 0;
    for (std::int64_t i = 0; i < n; ++i) K = std::max(K, c[i] + 1);
    p.start.assign(static_cast<std::size_t>(K) + 1, 0);
    for (std::int64_t i = 0; i < n; ++i) ++p.start[static_cast<std::size_t>(c[i]) + 1];
    for (std::int32_t k = 0; k < K; ++k) {
      p.E += g[static_cast<std::size_t>(p.start[k + 1])];
      p.start[k + 1] += p.start[k];
    }
    p.members.resize(static_cast<std::size_t>(n));
    std::vector<std::int64_t> fill(p.start.begin(), p.start.end() - 1);
    for (std::int64_t i = 0; i < n; ++i) p.members[static_cast<std::size_t>(fill[c[i]]++)] = i;
  }

  // Draws per block: the block's labels of one item are contiguous, and its counters (block x
  // kmax) stay within about a megabyte.
  const std::int64_t kmax = std::max<std::int32_t>(1, d.kmax);
  const std::int64_t block = std::max<std::int64_t>(1, std::min<std::int64_t>(64, (std::int64_t{1} << 18) / kmax));
  const std::int64_t n_blocks = (H + block - 1) / block;
  const int threads = loop_threads(n_jobs, n_blocks);
  std::vector<std::vector<std::int32_t>> scratch(static_cast<std::size_t>(threads),
                                                 std::vector<std::int32_t>(static_cast<std::size_t>(block * kmax), 0));

  parallel_for(threads, n_blocks, interrupt, [&](std::int64_t blk, int t) {
    const std::int64_t h0 = blk * block, nb = std::min(block, H - h0);
    std::int32_t* cnt = scratch[static_cast<std::size_t>(t)].data();  // cnt[b * kmax + label], all zero
    double D[64], J[64];
    // Draw side: the cluster sizes of each draw of the block.
    for (std::int64_t i = 0; i < n; ++i) {
      const Label* lab = d.item(i) + h0;
      for (std::int64_t b = 0; b < nb; ++b) ++cnt[b * kmax + lab[b]];
    }
    for (std::int64_t b = 0; b < nb; ++b) {
      std::int32_t* row = cnt + b * kmax;
      double s = 0.0;
      for (std::int32_t k = 0; k < d.k[h0 + b]; ++k) {
        s += g[static_cast<std::size_t>(row[k])];
        row[k] = 0;
      }
      D[b] = s;
    }
    for (std::int64_t l = 0; l < L; ++l) {
      const Particle& p = parts[static_cast<std::size_t>(l)];
      std::fill(J, J + nb, 0.0);
      const std::int64_t K = static_cast<std::int64_t>(p.start.size()) - 1;
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t* first = p.members.data() + p.start[k];
        const std::int64_t* last = p.members.data() + p.start[k + 1];
        for (const std::int64_t* it = first; it != last; ++it) {
          const Label* lab = d.item(*it) + h0;
          for (std::int64_t b = 0; b < nb; ++b) ++cnt[b * kmax + lab[b]];
        }
        // Read each cell once: the first member met with a draw label takes its count and
        // zeroes it, so later members of the same cell add g(0) = 0.
        for (const std::int64_t* it = first; it != last; ++it) {
          const Label* lab = d.item(*it) + h0;
          for (std::int64_t b = 0; b < nb; ++b) {
            std::int32_t& x = cnt[b * kmax + lab[b]];
            J[b] += g[static_cast<std::size_t>(x)];
            x = 0;
          }
        }
      }
      for (std::int64_t b = 0; b < nb; ++b)
        out[(h0 + b) * L + l] = vi.combine(static_cast<double>(n), D[b], p.E, J[b]);
    }
  });
}

}  // namespace salsox
