// The one abstraction every built-in (and tabulated plugin) loss shares, after the salso crate's
// count-based loss trait: for a draw rho and an estimate rho-hat of m items,
//   L(rho, rho-hat) = combine(m, D, E, J),
//   D = sum over draw clusters S of g_draw(|S|),
//   E = sum over estimate clusters T of g_est(|T|),
//   J = sum over contingency cells of g_cell(|S n T|).
// g_* are tabulated once for 0..n, so an allocation step only reads tables.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace salsox {

enum class LossKind { Binder, VI, OMARI, NVI, ID, NID, Tabulated };

// Whether the count-table search scores a loss of this kind through cell sums (cacheable).
inline bool scores_by_cell_sums(LossKind kind) {
  return kind == LossKind::VI || kind == LossKind::Tabulated || kind == LossKind::ID;
}

inline double xlog2x(double x) { return x > 0 ? x * std::log2(x) : 0.0; }

// By-value max: std::max (which returns a reference) compiled to a branch in the inner loops.
inline double vmax(double x, double y) { return x < y ? y : x; }
// x where c, else y, through a mask: a branch on NID's Hr > He is mispredicted half the time.
inline double vselect(bool c, double x, double y) {
  std::uint64_t bx, by;
  std::memcpy(&bx, &x, sizeof bx);
  std::memcpy(&by, &y, sizeof by);
  const std::uint64_t m = std::uint64_t{0} - static_cast<std::uint64_t>(c);
  const std::uint64_t r = (bx & m) | (by & ~m);
  double out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

struct CountLoss {
  LossKind kind = LossKind::VI;
  double a = 1.0, b = 1.0;
  std::vector<double> g_draw, g_est, g_cell;  // each of length n + 1

  // Additive losses (Binder, VI, tabulated plugins) have combine = (D + E + J) / norm(m): the
  // best allocation then depends only on changes of E and J, the paper's shortcut.
  bool additive() const {
    return kind == LossKind::Binder || kind == LossKind::VI || kind == LossKind::Tabulated;
  }

  static CountLoss builtin(LossKind kind, double a, double b, std::int64_t n) {
    if (kind == LossKind::Tabulated) throw std::invalid_argument("tabulated losses need tables");
    CountLoss L;
    L.kind = kind;
    L.a = a;
    L.b = b;
    auto tab = [n](auto g) {
      std::vector<double> t(static_cast<std::size_t>(n) + 2);
      for (std::size_t x = 0; x < t.size(); ++x) t[x] = g(static_cast<double>(x));
      return t;
    };
    switch (kind) {
      // Binder and VI keep D, E and J unweighted: combine forms a (D - J) + b (E - J), whose
      // terms are >= 0 and exactly 0 for equal partitions (no cancellation of weighted sums).
      case LossKind::Binder:
        L.g_draw = L.g_est = L.g_cell = tab([](double x) { return x * x; });
        break;
      case LossKind::OMARI:
        L.g_draw = L.g_est = L.g_cell = tab([](double x) { return x * (x - 1) / 2; });
        break;
      default:  // VI, NVI, ID, NID: entropies
        L.g_draw = L.g_est = L.g_cell = tab([](double x) { return xlog2x(x); });
    }
    return L;
  }

  // Tables from a plugin, already evaluated at 0..n; combine is D + E + J.
  static CountLoss tabulated(std::vector<double> g_draw, std::vector<double> g_est,
                             std::vector<double> g_cell) {
    CountLoss L;
    L.kind = LossKind::Tabulated;
    const std::size_t len = g_cell.size();
    if (len < 2 || g_draw.size() != len || g_est.size() != len)
      throw std::invalid_argument("tabulated loss tables must all have length n + 1");
    // One spare entry keeps `table[x + 1]` valid for x = n.
    for (auto* t : {&g_draw, &g_est, &g_cell}) t->push_back(t->back());
    L.g_draw = std::move(g_draw);
    L.g_est = std::move(g_est);
    L.g_cell = std::move(g_cell);
    return L;
  }

  double combine(double m, double D, double E, double J) const {
    if (kind == LossKind::Tabulated) return D + E + J;
    // For the built-in g, D >= J and E >= J, with equality exactly when the draw (resp. the
    // estimate) refines the other; otherwise the gap is at least 1 (splitting a cluster of a + b
    // items adds g(a + b) - g(a) - g(b) >= 1). So a gap is zero exactly when it is below 1/2;
    // the sums round far below that (a tolerance relative to J, which grows like n^2, would not do).
    const double dj = D - J < 0.5 ? 0.0 : D - J;
    const double ej = E - J < 0.5 ? 0.0 : E - J;
    if (dj == 0.0 && ej == 0.0) return 0.0;
    switch (kind) {
      case LossKind::Binder: return (a * dj + b * ej) / (m * m);
      case LossKind::VI: return (a * dj + b * ej) / m;
      case LossKind::OMARI: return std::max(0.0, omari(m, D, E, J));
      default: break;  // NVI, ID, NID
    }
    const Entropies e = entropies(m, D, E, J);
    if (kind == LossKind::NVI) return nvi_of(e.draw, e.est, e.joint, negligible_bound(m));
    if (kind == LossKind::ID) return id_of(e.draw, e.est, e.joint);
    return nid_of(e.draw, e.est, e.joint, negligible_bound(m));
  }

  // Weights of the estimate and cell sums in an additive loss's allocation score.
  double est_weight() const { return kind == LossKind::Tabulated ? 1.0 : b; }
  double cell_weight() const { return kind == LossKind::Tabulated ? 1.0 : -(a + b); }

  // 1 - adjusted Rand index from pair counts; identical trivial partitions (the only case
  // with a zero denominator) have ARI 1.
  static double omari(double m, double A, double B, double X) {
    const double N = m * (m - 1) / 2;
    if (N <= 0) return 0.0;
    const double expected = A * B / N;
    const double denom = 0.5 * (A + B) - expected;
    if (denom == 0.0) return 0.0;
    return 1.0 - (X - expected) / denom;
  }

  struct Entropies {
    double draw, est, joint;
  };
  // Entropies (bits) from sums of x log2 x; clamped at 0 against rounding.
  static Entropies entropies(double m, double D, double E, double J) {
    const double lm = std::log2(m);
    Entropies e;
    e.draw = std::max(0.0, lm - D / m);
    e.est = std::max(0.0, lm - E / m);
    e.joint = std::max(0.0, lm - J / m);
    return e;
  }
  // An entropy at or below this bound is an exact zero (the smallest positive entropy of a
  // partition of m items is about log2(m) / m), so divisions by it are avoided.
  static double negligible_bound(double m) { return 1e-12 * std::max(1.0, std::log2(m)); }

  // The entropy-based losses from the draw, estimate and joint entropies; `tiny` is
  // negligible_bound(m). Shared by combine and by the incremental scores.
  static double nvi_of(double draw, double est, double joint, double tiny) {
    const double v = vmax(0.0, 1.0 - (draw + est - joint) / joint);
    return joint <= tiny ? 0.0 : v;
  }
  static double id_of(double draw, double est, double joint) {
    return vmax(0.0, vmax(draw, est) - (draw + est - joint));
  }
  static double nid_of(double draw, double est, double joint, double tiny) {
    const double top = vmax(draw, est);
    const double v = vmax(0.0, 1.0 - (draw + est - joint) / top);
    return top <= tiny ? 0.0 : v;
  }
};

}  // namespace salsox
