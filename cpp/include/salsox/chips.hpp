// CHIPS (Page, Barrientos, Dahl & Dunson 2025, "Uncertainty Quantification in Bayesian
// Clustering"): greedy growth of a sub-partition (some items unallocated) whose posterior
// probability, the fraction of draws whose restriction to the allocated items is exactly it,
// stays high. One run keeps the set A of draws consistent with the sub-partition, per draw a
// map from draw cluster to CHIPS cluster, and K, the number of CHIPS clusters. Each step
// counts, for every unallocated item i, over the draws of A, which CHIPS cluster i would join
// (its draw cluster's mapped label, or K, "new", when unmapped); c_i is the largest count and
// l_i its label. The item with the largest c_i is allocated (q = c_i / H) unless q falls below
// the threshold. Ties (items, then labels) are broken uniformly at random from the run's own
// stream (seed, run), so results do not depend on the number of threads.
//
// Speed-up, exact: c_i never increases from one step to the next (A only shrinks, and draws
// counted for a label created at step t counted for "new" before it), so a stale count is an
// upper bound: items are examined in decreasing order of their bound until none can reach the
// step's maximum. An item that all draws of A put in one existing cluster keeps c_i = |A|.
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "draws.hpp"
#include "rng.hpp"
#include "search.hpp"  // StopControl, Monitor, SearchAborted: the search's Ctrl-C mechanism

namespace salsox {

struct ChipsOptions {
  std::int64_t n_runs = 64;
  double threshold = 0.0;  // stop when q = c / H < threshold
  int n_jobs = 1;
  std::uint64_t seed = 0;
  std::int64_t first_run = 0;  // run r uses random stream first_run + r
};

// The start shared by all runs: the initial sub-partition (labels 0..K0-1, -1 unallocated),
// the draws consistent with it and, in those draws, the map draw cluster -> CHIPS cluster.
struct ChipsStart {
  std::vector<std::int32_t> labels;
  std::int32_t K0 = 0;
  std::int64_t size = 0;              // allocated items
  std::vector<std::int32_t> map;      // one entry per (draw, draw cluster); -1 unmapped
  std::vector<std::int32_t> active;   // the consistent draws, increasing
};

// One run: the items allocated in order, their CHIPS labels (creation order) and |A| after
// each step (the probability is count / H); where it stopped below the threshold, every item
// left unallocated with its count c_i.
struct ChipsRunResult {
  std::int64_t run = -1;
  std::vector<std::int32_t> items, labels;
  std::vector<std::int64_t> counts;
  std::vector<std::int32_t> unallocated;
  std::vector<std::int64_t> unallocated_counts;
  bool stopped = false;  // stopped below the threshold (else every item was allocated)
  std::int64_t final_size(const ChipsStart& s) const { return s.size + static_cast<std::int64_t>(items.size()); }
};

// The first member of each cluster of `labels` (n labels, -1 unallocated); -1 for a label
// that no item has.
inline std::vector<std::int64_t> cluster_representatives(const std::int32_t* labels, std::int64_t n) {
  std::vector<std::int64_t> rep;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t c = labels[i];
    if (c < 0) continue;
    if (c >= static_cast<std::int32_t>(rep.size())) rep.resize(static_cast<std::size_t>(c) + 1, -1);
    if (rep[c] < 0) rep[c] = i;
  }
  return rep;
}

// `initial`: n labels, -1 for unallocated, others 0..K0-1 each used (nullptr: none).
template <class Label>
ChipsStart chips_start(const DrawsView<Label>& v, const std::int32_t* initial) {
  if (v.H > INT32_MAX) throw std::invalid_argument("chips supports at most 2^31 - 1 draws");
  ChipsStart s;
  s.labels.assign(static_cast<std::size_t>(v.n), -1);
  s.map.assign(static_cast<std::size_t>(v.rows), -1);
  std::vector<std::int64_t> rep;  // first member of each initial cluster
  if (initial) {
    for (std::int64_t i = 0; i < v.n; ++i) {
      if (initial[i] < -1 || initial[i] >= v.n) throw std::invalid_argument("initial labels must be -1 or 0..n-1");
      s.labels[i] = initial[i];
      s.size += initial[i] >= 0;
    }
    rep = cluster_representatives(initial, v.n);
    for (const auto r : rep)
      if (r < 0) throw std::invalid_argument("initial labels must be 0..K-1 without gaps");
  }
  s.K0 = static_cast<std::int32_t>(rep.size());
  // A draw is consistent when every allocated item shares its cluster representative's draw
  // label, and distinct clusters' representatives have distinct draw labels.
  std::vector<std::uint8_t> ok(static_cast<std::size_t>(v.H), 1);
  for (std::int64_t i = 0; i < v.n; ++i) {
    if (s.labels[i] < 0 || rep[s.labels[i]] == i) continue;
    const Label* li = v.item(i);
    const Label* lr = v.item(rep[s.labels[i]]);
    for (std::int64_t h = 0; h < v.H; ++h) ok[h] &= static_cast<std::uint8_t>(li[h] == lr[h]);
  }
  for (std::int32_t c = 0; c < s.K0; ++c) {
    const Label* lr = v.item(rep[c]);
    for (std::int64_t h = 0; h < v.H; ++h) {
      if (!ok[h]) continue;
      auto& slot = s.map[static_cast<std::size_t>(v.base[h] + lr[h])];
      if (slot >= 0) ok[h] = 0;
      else slot = c;
    }
  }
  for (std::int64_t h = 0; h < v.H; ++h)
    if (ok[h]) s.active.push_back(static_cast<std::int32_t>(h));
  return s;
}

// One of `among` uniformly: a draw from rng only when there is a choice.
inline std::int32_t pick(Rng& rng, const std::vector<std::int32_t>& among) {
  return among.size() > 1 ? among[rng.below(among.size())] : among[0];
}

// One thread's workspace, reused for all of its runs.
template <class Label>
class ChipsRun {
 public:
  ChipsRun(const DrawsView<Label>& v, const ChipsStart& start)
      : v_(v), start_(start), cnt_(static_cast<std::size_t>(v.n) + 2, 0) {}

  ChipsRunResult operator()(std::int64_t run, const ChipsOptions& o, StopControl& control) {
    ChipsRunResult res;
    res.run = o.first_run + run;
    Rng rng(o.seed, static_cast<std::uint64_t>(o.first_run + run));
    map_ = start_.map;
    active_ = start_.active;
    abase_.resize(active_.size());
    for (std::size_t t = 0; t < active_.size(); ++t) abase_[t] = v_.base[active_[t]];
    labels_ = start_.labels;
    K_ = start_.K0;
    full_.assign(labels_.size(), 0);
    full_left_ = 0;
    const auto H = static_cast<double>(v_.H);
    // Upper bounds on c_i in a max-heap of (bound, item).
    heap_.clear();
    for (std::int64_t i = 0; i < v_.n; ++i)
      if (labels_[i] < 0) heap_.emplace_back(static_cast<std::int64_t>(active_.size()), static_cast<std::int32_t>(i));
    std::make_heap(heap_.begin(), heap_.end());
    while (!heap_.empty()) {
      if (active_.empty() && o.threshold <= 0.0) {
        allocate_tied(res, rng, control, [&](std::int32_t) {
          return K_ > 0 ? static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(K_) + 1)) : 0;
        });
        break;
      }
      if (!active_.empty() && full_left_ == static_cast<std::int64_t>(heap_.size()) &&
          static_cast<double>(active_.size()) / H >= o.threshold) {
        allocate_tied(res, rng, control, [&](std::int32_t j) {
          count(j, true);
          return pick(rng, label_ties_);
        });
        break;
      }
      // Exact counts of every item whose bound can reach the best count so far.
      std::int64_t best = -1;
      ties_.clear();
      examined_.clear();
      while (!heap_.empty() && heap_.front().first >= best) {
        std::pop_heap(heap_.begin(), heap_.end());
        const std::int32_t i = heap_.back().second;
        heap_.pop_back();
        control.poll();
        // An item that all draws of A put in one existing cluster counts |A| from then on.
        const std::int64_t c = full_[i] ? static_cast<std::int64_t>(active_.size()) : count(i, false);
        if (!full_[i] && c > 0 && c == static_cast<std::int64_t>(active_.size()) && touched_[0] < K_) {
          full_[i] = 1;
          ++full_left_;
        }
        examined_.emplace_back(c, i);
        if (c > best) {
          best = c;
          ties_.clear();
        }
        if (c == best) ties_.push_back(i);
      }
      if (static_cast<double>(best) / H < o.threshold) {
        // Stop: every unallocated item with its exact count.
        for (const auto& e : heap_)
          examined_.emplace_back(full_[e.second] ? static_cast<std::int64_t>(active_.size()) : count(e.second, false),
                                 e.second);
        std::sort(examined_.begin(), examined_.end(),
                  [](const auto& a, const auto& b) { return a.second < b.second; });
        for (const auto& e : examined_) {
          res.unallocated.push_back(e.second);
          res.unallocated_counts.push_back(e.first);
        }
        res.stopped = true;
        break;
      }
      std::sort(ties_.begin(), ties_.end());
      const std::int32_t j = pick(rng, ties_);
      count(j, true);  // its tied labels, into label_ties_ (ascending)
      allocate(res, j, pick(rng, label_ties_));
      if (full_[j]) --full_left_;
      for (const auto& e : examined_)
        if (e.second != j) {
          heap_.emplace_back(e.first, e.second);
          std::push_heap(heap_.begin(), heap_.end());
        }
    }
    return res;
  }

 private:
  // Every item left ties (no draw left in A, or every item keeps its one cluster in all draws of
  // A): each step picks an item, then its label with pick_label(j), drawing from rng as the loop
  // above would, without its O(n log n) pops and pushes per step.
  template <class PickLabel>
  void allocate_tied(ChipsRunResult& res, Rng& rng, StopControl& control, PickLabel&& pick_label) {
    ties_.clear();
    for (const auto& e : heap_) ties_.push_back(e.second);
    heap_.clear();
    std::sort(ties_.begin(), ties_.end());
    while (!ties_.empty()) {
      control.poll();
      const std::size_t at = ties_.size() > 1 ? static_cast<std::size_t>(rng.below(ties_.size())) : 0;
      const std::int32_t j = ties_[at];
      ties_.erase(ties_.begin() + static_cast<std::ptrdiff_t>(at));
      allocate(res, j, pick_label(j));
    }
    full_left_ = 0;
  }

  // c_i over the draws of A; with `ties`, also every label reaching it, ascending.
  std::int64_t count(std::int32_t i, bool ties) {
    const Label* li = v_.item(i);
    const std::int32_t* act = active_.data();
    const std::int64_t* ab = abase_.data();
    const std::int32_t* map = map_.data();
    std::int64_t* cnt = cnt_.data();
    const std::size_t na = active_.size();
    touched_.clear();
    const auto labels = static_cast<std::size_t>(K_) + 1;
    if (4 * labels <= na) {
      // Few labels for many draws: four interleaved tallies, so that consecutive draws
      // landing in the same cluster do not wait on each other's increment.
      lanes_.assign(4 * labels, 0);
      std::int64_t* lane = lanes_.data();
      std::size_t t = 0;
      auto at = [&](std::size_t u) {
        const std::int32_t c = map[ab[u] + li[act[u]]];
        return static_cast<std::size_t>(c < 0 ? K_ : c) * 4;
      };
      for (; t + 4 <= na; t += 4) {
        ++lane[at(t)];
        ++lane[at(t + 1) + 1];
        ++lane[at(t + 2) + 2];
        ++lane[at(t + 3) + 3];
      }
      for (; t < na; ++t) ++lane[at(t)];
      for (std::size_t c = 0; c < labels; ++c) {
        const std::int64_t sum = lane[4 * c] + lane[4 * c + 1] + lane[4 * c + 2] + lane[4 * c + 3];
        if (sum > 0) {
          cnt[c] = sum;
          touched_.push_back(static_cast<std::int32_t>(c));
        }
      }
    } else {
      for (std::size_t t = 0; t < na; ++t) {
        std::int32_t c = map[ab[t] + li[act[t]]];
        if (c < 0) c = K_;
        if (cnt[c]++ == 0) touched_.push_back(c);
      }
    }
    std::int64_t best = 0;
    for (const auto c : touched_) best = std::max(best, cnt[c]);
    if (ties) {
      label_ties_.clear();
      if (na == 0) {  // no draws left: every label (K + 1 of them) ties at 0
        for (std::int32_t c = 0; c <= K_; ++c) label_ties_.push_back(c);
      } else {
        for (const auto c : touched_)
          if (cnt[c] == best) label_ties_.push_back(c);
        std::sort(label_ties_.begin(), label_ties_.end());
      }
    }
    for (const auto c : touched_) cnt[c] = 0;
    return best;
  }

  // Item j joins CHIPS cluster l (K: a new one), a step of `res`; A keeps the draws where j
  // landed in l.
  void allocate(ChipsRunResult& res, std::int32_t j, std::int32_t l) {
    const Label* lj = v_.item(j);
    std::size_t kept = 0;
    for (std::size_t t = 0; t < active_.size(); ++t) {
      const std::int64_t d = abase_[t] + lj[active_[t]];
      std::int32_t& m = map_[static_cast<std::size_t>(d)];
      bool keep;
      if (m < 0) {
        keep = l == K_;
        if (keep) m = K_;
      } else {
        keep = m == l;
      }
      if (keep) {
        active_[kept] = active_[t];
        abase_[kept] = abase_[t];
        ++kept;
      }
    }
    active_.resize(kept);
    abase_.resize(kept);
    if (l == K_) ++K_;
    labels_[j] = l;
    res.items.push_back(j);
    res.labels.push_back(l);
    res.counts.push_back(static_cast<std::int64_t>(kept));
  }

  const DrawsView<Label>& v_;
  const ChipsStart& start_;
  std::vector<std::int64_t> cnt_, lanes_;
  std::vector<std::int32_t> map_, active_, labels_, touched_, ties_, label_ties_;
  std::vector<std::uint8_t> full_;
  std::vector<std::int64_t> abase_;
  std::vector<std::pair<std::int64_t, std::int32_t>> heap_, examined_;
  std::int32_t K_ = 0;
  std::int64_t full_left_ = 0;  // unallocated items marked in full_
};

struct ChipsRuns {
  std::vector<ChipsRunResult> runs;  // by run index
  bool interrupted = false;
};

// opts.n_runs runs in parallel over runs; run r always uses stream (seed, first_run + r).
template <class Label>
ChipsRuns run_chips(const DrawsView<Label>& v, const ChipsStart& start, const ChipsOptions& opts,
                    Monitor monitor) {
  if (opts.n_runs < 1) throw std::invalid_argument("n_runs must be >= 1");
  ChipsRuns out;
  out.runs.resize(static_cast<std::size_t>(opts.n_runs));
  StopControl control(std::move(monitor), opts.n_runs);
  int threads = opts.n_jobs > 0 ? opts.n_jobs : 1;
  if (threads > opts.n_runs) threads = static_cast<int>(opts.n_runs);
  threads = usable_threads(threads);
  // One worker per thread, built up front; the runs are handed out as in run_salso.
  std::vector<std::unique_ptr<ChipsRun<Label>>> workers;
  for (int t = 0; t < threads; ++t) workers.push_back(std::make_unique<ChipsRun<Label>>(v, start));
  for_each_run(threads, opts.n_runs, control, [&](std::int64_t r, int thread) {
    out.runs[static_cast<std::size_t>(r)] = (*workers[thread])(r, opts, control);
    return true;
  });
  out.interrupted = control.interrupted();
  return out;
}

// The states of all runs at a given size, for choosing rows: labels are rebuilt by replaying
// steps, and compared in canonical form (first appearance) without building it.
class ChipsStates {
 public:
  ChipsStates(const ChipsStart& start, const std::vector<ChipsRunResult>& runs)
      : start_(start), runs_(runs), labels_(runs.size(), start.labels), at_(runs.size(), 0),
        ma_(start.labels.size() + 1, -1), mb_(start.labels.size() + 1, -1) {}

  std::int64_t final_size(std::size_t r) const { return runs_[r].final_size(start_); }
  // |A| of run r at size s (start.size <= s <= final size).
  std::int64_t count(std::size_t r, std::int64_t s) const {
    return s == start_.size ? static_cast<std::int64_t>(start_.active.size()) : runs_[r].counts[s - start_.size - 1];
  }
  // Labels (creation order) of run r at size s; sizes must not decrease between calls.
  const std::vector<std::int32_t>& labels(std::size_t r, std::int64_t s) {
    auto& lab = labels_[r];
    for (; start_.size + at_[r] < s; ++at_[r]) lab[runs_[r].items[at_[r]]] = runs_[r].labels[at_[r]];
    return lab;
  }
  // Whether a's canonical labels come lexicographically before b's (-1 first).
  bool canonical_less(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
    std::int32_t na = 0, nb = 0;
    bool less = false;
    std::size_t i = 0;
    for (; i < a.size(); ++i) {
      const std::int32_t ca = a[i] < 0 ? -1 : (ma_[a[i]] < 0 ? (ma_[a[i]] = na++) : ma_[a[i]]);
      const std::int32_t cb = b[i] < 0 ? -1 : (mb_[b[i]] < 0 ? (mb_[b[i]] = nb++) : mb_[b[i]]);
      if (ca != cb) {
        less = ca < cb;
        break;
      }
    }
    for (std::size_t k = 0; k <= i && k < a.size(); ++k) {  // reset only what was touched
      if (a[k] >= 0) ma_[a[k]] = -1;
      if (b[k] >= 0) mb_[b[k]] = -1;
    }
    return less;
  }

 private:
  const ChipsStart& start_;
  const std::vector<ChipsRunResult>& runs_;
  std::vector<std::vector<std::int32_t>> labels_;
  std::vector<std::int64_t> at_;
  std::vector<std::int32_t> ma_, mb_;
};

// Labels relabelled 0..k-1 by first appearance, -1 kept.
inline std::vector<std::int32_t> canonical_labels(const std::vector<std::int32_t>& lab) {
  std::vector<std::int32_t> map(lab.size() + 1, -1), out(lab.size());
  std::int32_t k = 0;
  for (std::size_t i = 0; i < lab.size(); ++i)
    out[i] = lab[i] < 0 ? -1 : (map[lab[i]] < 0 ? (map[lab[i]] = k++) : map[lab[i]]);
  return out;
}

// A chosen state: which run, its size and |A|, its canonical labels (not for path rows).
struct ChipsRow {
  std::int64_t run = -1;  // position in the runs vector
  std::int64_t size = 0;
  std::int64_t count = 0;
  bool final_state = false;  // the run's final state (its unallocated counts apply)
  std::vector<std::int32_t> labels;
};

// Path: for every size from the start's up to the largest reached, the state with the highest
// probability; ties go to the lexicographically smallest canonical labels, so the choice
// depends neither on run order nor on threads. Rows largest subset first, without their labels
// (n + 1 rows of n labels are 4 n^2 bytes): the run's steps rebuild them on demand.
inline std::vector<ChipsRow> chips_path(const ChipsStart& start, const std::vector<ChipsRunResult>& runs) {
  ChipsStates st(start, runs);
  std::int64_t top = start.size;
  for (std::size_t r = 0; r < runs.size(); ++r) top = std::max(top, st.final_size(r));
  std::vector<ChipsRow> rows;
  for (std::int64_t s = start.size; s <= top; ++s) {
    std::int64_t best = -1;
    std::size_t chosen = runs.size();
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (st.final_size(r) < s || st.count(r, s) < best) continue;
      if (st.count(r, s) > best || st.canonical_less(st.labels(r, s), st.labels(chosen, s))) chosen = r;
      best = st.count(r, s);
    }
    ChipsRow row;
    row.run = static_cast<std::int64_t>(chosen);
    row.size = s;
    row.count = best;
    row.final_state = st.final_size(chosen) == s;
    rows.push_back(row);
  }
  std::reverse(rows.begin(), rows.end());
  return rows;
}

// Every run's final state, most items first, then highest probability, then canonical labels
// (then run index); the first is the single-best state.
inline std::vector<ChipsRow> chips_finals(const ChipsStart& start, const std::vector<ChipsRunResult>& runs) {
  ChipsStates st(start, runs);
  std::vector<ChipsRow> rows(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    rows[r].run = static_cast<std::int64_t>(r);
    rows[r].size = st.final_size(r);
    rows[r].count = st.count(r, rows[r].size);
    rows[r].final_state = true;
    rows[r].labels = canonical_labels(st.labels(r, rows[r].size));
  }
  // Canonical labels compare as std::vector compares them, -1 first (as canonical_less).
  std::sort(rows.begin(), rows.end(), [](const ChipsRow& a, const ChipsRow& b) {
    if (a.size != b.size) return a.size > b.size;
    if (a.count != b.count) return a.count > b.count;
    return std::tie(a.labels, a.run) < std::tie(b.labels, b.run);
  });
  return rows;
}

// For one sub-partition (labels 0..K-1, -1 unallocated): which draws are consistent with it
// (`consistent`, H entries) and, per cluster, in how many draws all its members share a label
// (0 for a label below K that no item has). `stamp` (one entry per draw cluster, all -1 on
// entry and on return) is workspace.
template <class Label>
void chips_consistency(const DrawsView<Label>& v, const std::int32_t* labels, std::uint8_t* consistent,
                       std::vector<std::int64_t>& together, std::vector<std::int32_t>& stamp) {
  const std::vector<std::int64_t> rep = cluster_representatives(labels, v.n);
  const auto K = static_cast<std::int32_t>(rep.size());
  // ok[c * H + h]: cluster c's members share a label in draw h.
  std::vector<std::uint8_t> ok(static_cast<std::size_t>(K) * static_cast<std::size_t>(v.H), 1);
  for (std::int64_t i = 0; i < v.n; ++i) {
    const std::int32_t c = labels[i];
    if (c < 0 || rep[c] == i) continue;
    const Label* li = v.item(i);
    const Label* lr = v.item(rep[c]);
    std::uint8_t* okc = ok.data() + static_cast<std::size_t>(c) * v.H;
    for (std::int64_t h = 0; h < v.H; ++h) okc[h] &= static_cast<std::uint8_t>(li[h] == lr[h]);
  }
  together.assign(static_cast<std::size_t>(K), 0);
  for (std::int64_t h = 0; h < v.H; ++h) consistent[h] = 1;
  for (std::int32_t c = 0; c < K; ++c) {
    if (rep[c] < 0) continue;
    const Label* lr = v.item(rep[c]);
    const std::uint8_t* okc = ok.data() + static_cast<std::size_t>(c) * v.H;
    for (std::int64_t h = 0; h < v.H; ++h) {
      together[c] += okc[h];
      auto& slot = stamp[static_cast<std::size_t>(v.base[h] + lr[h])];
      if (!okc[h] || slot >= 0) consistent[h] = 0;  // split, or sharing a draw cluster with another
      slot = c;
    }
  }
  for (std::int32_t c = 0; c < K; ++c) {
    if (rep[c] < 0) continue;
    const Label* lr = v.item(rep[c]);
    for (std::int64_t h = 0; h < v.H; ++h) stamp[static_cast<std::size_t>(v.base[h] + lr[h])] = -1;
  }
}

}  // namespace salsox
