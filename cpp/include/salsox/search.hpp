// The four SALSO phases (Dahl, Johnson & Mueller 2022, Algorithm 1): initialisation, sweetening
// scans, zealous updates, recording; and the multi-run driver. Written once against the State
// concept: clear, add, remove, close_slot, score, expected_loss, slots, size, label, labels,
// rebuild, n, max_clusters, and the optional members of state_traits.hpp.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "dispatch.hpp"
#include "rng.hpp"
#include "state_traits.hpp"
#include "threads.hpp"

namespace salsox {

struct SearchOptions {
  std::int64_t n_runs = 16;
  std::int32_t max_zealous = 10;
  double prob_sequential = 0.5;
  // R's probSingletonsInitialization (see initialise_sequentially); at 0 nothing is drawn for it.
  double prob_singletons = 0.0;
  std::int64_t max_scans = 0;  // 0: scan until nothing changes
  double seconds = 0.0;        // 0: no time budget
  int n_jobs = 1;
  std::uint64_t seed = 0;
  // Run r uses random stream first_run + r: batches run elsewhere (Dask) reproduce one call's runs.
  std::int64_t first_run = 0;
  // Optional starts from a user initialiser: row r (n labels 0..q-1) starts run r if initial_used[r].
  const std::int32_t* initial = nullptr;
  const std::uint8_t* initial_used = nullptr;
  // Optional fixed items: n entries, -1 for a free item, else its fixed cluster 0..n_fixed-1 (in
  // order of first appearance), never moved nor dissolved; given starts must agree with them.
  const std::int32_t* fixed = nullptr;
  std::int32_t n_fixed = 0;
  // Threads inside each run (over draws): 0 lets the threads with no run left help the runs
  // still going (Crew), 1 disables, more opens a parallel region of that many per loop.
  int inner_threads = 0;
  // Tests only: record the zealous rounds and the sums' drift (see RunResult).
  bool debug = false;
};

struct RunResult {
  std::int64_t run = -1;  // index of the run (its random stream)
  bool done = false;
  std::vector<std::int32_t> labels;
  double loss = std::numeric_limits<double>::infinity();
  bool sequential = false;
  bool singletons = false;  // a sequential allocation started from singletons
  bool given = false;  // started from a user initialiser's partition
  std::int64_t scans = 0;
  std::int32_t zealous_attempts = 0;
  std::int32_t zealous_accepts = 0;
  double seconds = 0.0;
  int threads = 1;  // the most threads a pass over the draws had inside this run
  // With SearchOptions::debug: the state's sums_drift at the end of the run, and per zealous
  // round the labels at its start and the members of each cluster tried (round in zealous_round).
  double sums_drift = 0.0;
  int score_threads = 1;  // the most threads a score pass had (debug)
  std::vector<std::vector<std::int32_t>> zealous_starts;
  std::vector<std::vector<std::int64_t>> zealous_tried;
  std::vector<std::int32_t> zealous_round;
};

struct SearchResult {
  std::vector<RunResult> runs;  // the finished runs, by run index (labels dropped)
  std::int64_t best = -1;       // position in `runs` of the best run
  std::int64_t best_run = -1;   // its run index
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<std::int32_t> best_labels;
  std::int64_t runs_done = 0;
  bool interrupted = false;
  bool budget_exhausted = false;
  double seconds = 0.0;
};

template <class State>
class SalsoRun {
 public:
  SalsoRun(State& state, const SearchOptions& opts, std::int64_t run, StopControl& control)
      : st_(state), opts_(opts), run_(run),
        rng_(opts.seed, static_cast<std::uint64_t>(opts.first_run + run)), control_(control),
        scores_(static_cast<std::size_t>(state.max_clusters()) + 2) {}

  RunResult operator()() {
    RunResult res;
    const auto t0 = Clock::now();
    if constexpr (has_threads_used<State>::value) st_.reset_threads_used();
    // The draw is made even for given starts so that the random stream is the same either way.
    res.sequential = rng_.uniform() < opts_.prob_sequential;
    if (opts_.initial && opts_.initial_used[run_]) {
      res.given = true;
      res.sequential = false;
      const std::int32_t* row = opts_.initial + run_ * st_.n();
      st_.rebuild(std::vector<std::int32_t>(row, row + st_.n()));
    } else if (res.sequential) {
      res.singletons = opts_.prob_singletons > 0.0 && rng_.uniform() < opts_.prob_singletons;
      initialise_sequentially(res.singletons);
    } else {
      initialise_randomly();
    }
    // Sweeten and try zealous updates until nothing improves, or max_scans (per run, as in R).
    const bool capped = opts_.max_scans > 0;
    for (;;) {
      res.scans += sweeten(capped ? opts_.max_scans - res.scans : -1);
      const std::int32_t accepted = res.zealous_accepts;
      zealous_updates(res);
      if (res.zealous_accepts == accepted) break;
      if (capped && res.scans >= opts_.max_scans) break;
    }
    if constexpr (has_threads_used<State>::value) res.threads = st_.threads_used();
    if constexpr (has_sums_drift<State>::value)
      if (opts_.debug) res.sums_drift = st_.sums_drift();
    if constexpr (has_score_threads<State>::value)
      if (opts_.debug) res.score_threads = st_.score_threads_used();
    res.loss = st_.expected_loss();
    res.labels = st_.labels();
    res.seconds = seconds_since(t0);
    res.done = true;
    return res;
  }

 private:
  // Best slot, from an item's scores_, among occupied slots and a new cluster (never beyond the
  // cluster cap). `hole` is a slot left empty by the item's removal; it stands for the new one.
  // Ties go to `keep` (the item's previous slot), so an item moves only for a strict
  // improvement and scans cannot cycle.
  std::int32_t pick(std::int32_t hole, std::int32_t keep) {
    const std::int32_t q = st_.slots();
    std::int32_t best = -1;
    double best_score = std::numeric_limits<double>::infinity();
    for (std::int32_t k = 0; k < q; ++k) {
      if (k == hole) continue;
      if (scores_[k] < best_score) {
        best_score = scores_[k];
        best = k;
      }
    }
    const std::int32_t occupied = q - (hole >= 0 ? 1 : 0);
    if (occupied < st_.max_clusters() && (best < 0 || scores_[q] < best_score)) {
      best = hole >= 0 ? hole : q;
      best_score = scores_[q];
    }
    if (best < 0)  // every score was NaN (an overflowing loss) and the cap forbids a new cluster
      best = keep >= 0 ? keep : (hole == 0 ? 1 : 0);
    if (keep >= 0 && keep != best) {
      const double kept = keep == hole ? scores_[q] : scores_[keep];
      if (kept <= best_score) best = keep;
    }
    return best;
  }

  bool is_fixed(std::int64_t i) const { return opts_.fixed && opts_.fixed[i] >= 0; }

  // With `singletons`, the first free items in the order open clusters up to the cap (R's option).
  void initialise_sequentially(bool singletons) {
    st_.clear();
    // Drawn over all items, fixed or not: with no fixed item, the random stream of a plain search.
    rng_.permutation(order_, static_cast<std::size_t>(st_.n()));
    if (opts_.fixed) {
      // Fixed clusters first, in label order: item i of fixed cluster f opens slot f (labels
      // are in order of first appearance) or joins it; then only free items are allocated.
      for (std::int64_t i = 0; i < st_.n(); ++i)
        if (is_fixed(i)) st_.add(i, opts_.fixed[i]);
    }
    free_.clear();
    for (std::int64_t i : order_) {
      if (is_fixed(i)) continue;
      if (singletons && st_.slots() < st_.max_clusters()) st_.add(i, st_.slots());
      else free_.push_back(i);
    }
    allocate_in_turn(free_);
  }

  // Allocates the unallocated items in the given order, each to its best slot.
  void allocate_in_turn(const std::vector<std::int64_t>& items) {
    if (items.empty()) return;
    control_.poll();
    st_.score(items[0], scores_.data());
    for (std::size_t t = 0; t + 1 < items.size(); ++t) {
      const std::int32_t k = pick(-1, -1);
      control_.poll();
      st_.add(items[t], k);
      st_.score(items[t + 1], scores_.data());
    }
    st_.add(items.back(), pick(-1, -1));
  }

  void initialise_randomly() {
    const std::int64_t n = st_.n();
    std::vector<std::int32_t> labels(n), slot_of(st_.max_clusters(), -1);
    std::int32_t q = 0;
    // Fixed cluster f is label f; a free item drawing label c < n_fixed joins fixed cluster c.
    for (std::int32_t f = 0; f < opts_.n_fixed; ++f) slot_of[f] = q++;
    for (std::int64_t i = 0; i < n; ++i) {
      if (is_fixed(i)) {
        labels[i] = opts_.fixed[i];
        continue;
      }
      const auto c = static_cast<std::int32_t>(rng_.below(st_.max_clusters()));
      if (slot_of[c] < 0) slot_of[c] = q++;
      labels[i] = slot_of[c];
    }
    st_.rebuild(labels);
  }

  // Reallocates item i; returns whether the partition changed.
  bool reallocate(std::int64_t i) {
    if constexpr (has_move<State>::value) {
      // Scored in place. An item that chose to stay when the state was the one it is now would
      // choose the same again (ties keep it): it is skipped, with the same result.
      if (stayed_[i] == version_) return false;
      const std::int32_t old = st_.label(i);
      const std::int32_t hole = st_.size(old) == 1 ? old : -1;
      control_.poll();
      st_.score_move(i, scores_.data());
      const std::int32_t k = pick(hole, old);
      if (k == old) {
        stayed_[i] = version_;
        return false;
      }
      ++version_;
      st_.move(i, k);
      if (hole >= 0) st_.close_slot(hole);
      return true;
    }
    const std::int32_t old = st_.label(i);
    st_.remove(i);
    const std::int32_t hole = st_.size(old) == 0 ? old : -1;
    control_.poll();
    st_.score(i, scores_.data());
    const std::int32_t k = pick(hole, old);
    st_.add(i, k);
    if (hole >= 0 && k != hole) st_.close_slot(hole);
    return k != old;
  }

  // Scans until one changes nothing, or `left` scans (left < 0: no cap); returns the count.
  std::int64_t sweeten(std::int64_t left) {
    // Anything may have changed since the last sweetening (initialisation, zealous updates).
    ++version_;
    if (stayed_.size() != static_cast<std::size_t>(st_.n())) stayed_.assign(static_cast<std::size_t>(st_.n()), 0);
    std::int64_t scans = 0;
    for (;;) {
      if (left >= 0 && scans >= left) break;
      rng_.permutation(order_, static_cast<std::size_t>(st_.n()));
      bool changed = false;
      for (std::int64_t i : order_)
        if (!is_fixed(i)) changed |= reallocate(i);
      ++scans;
      if (!changed) break;
      refresh_sums();
    }
    return scans;
  }

  void refresh_sums() {
    if constexpr (has_refresh<State>::value) st_.refresh_sums();
  }

  void zealous_updates(RunResult& res) {
    const std::int32_t q0 = st_.slots();
    std::vector<std::int32_t> clusters;
    rng_.permutation(clusters, static_cast<std::size_t>(q0));
    // Each cluster is followed through the round by one of its items (an update moves only the
    // members of the cluster it tries, but renumbers slots), so none is tried twice or skipped.
    std::vector<std::int64_t> holder(static_cast<std::size_t>(q0), -1);
    for (std::int64_t i = st_.n() - 1; i >= 0; --i) holder[st_.label(i)] = i;
    const auto round = static_cast<std::int32_t>(res.zealous_starts.size());
    if (opts_.debug) res.zealous_starts.push_back(st_.labels());
    std::int32_t attempts = 0;
    bool touched = false;  // whether the running sums were updated
    std::vector<std::int64_t> members;
    double current = st_.expected_loss();
    bool saved = false;  // whether the state's snapshot is the current partition
    for (std::int32_t t = 0; t < q0 && attempts < opts_.max_zealous; ++t) {
      const std::int32_t c = st_.label(holder[clusters[t]]);
      // A singleton is already tried by every sweetening step, which can move its item
      // anywhere; as in R, it is not an attempt.
      if (st_.size(c) < 2) continue;
      members.clear();
      bool holds_fixed = false;
      for (std::int64_t i = 0; i < st_.n(); ++i)
        if (st_.label(i) == c) {
          members.push_back(i);
          holds_fixed |= is_fixed(i);
        }
      // Clusters holding fixed items are never dissolved and do not count against max_zealous.
      if (holds_fixed) continue;
      ++attempts;
      ++res.zealous_attempts;
      touched = true;
      if (opts_.debug) {
        res.zealous_tried.push_back(members);
        res.zealous_round.push_back(round);
      }
      const std::int32_t q_before = st_.slots();
      bool by_snapshot = false;
      if constexpr (has_snapshot<State>::value) {
        by_snapshot = st_.prefers_table_pass(static_cast<std::int64_t>(members.size()));
        if (by_snapshot) {
          if (!saved) st_.snapshot();
          saved = true;
          st_.release_slot(c);
        }
      }
      if (!by_snapshot)
        for (std::int64_t i : members) st_.remove(i);
      st_.close_slot(c);
      rng_.shuffle(members);
      allocate_in_turn(members);
      const double after = st_.expected_loss();
      if (current < after) {
        if constexpr (has_snapshot<State>::value) {
          if (by_snapshot) {
            st_.restore();
            continue;
          }
        }
        // Undo: take the members out again (the slots they opened empty out) and put the cluster
        // back together in the last slot.
        for (std::int64_t i : members) st_.remove(i);
        while (st_.slots() > q_before - 1) st_.close_slot(st_.slots() - 1);
        for (std::int64_t i : members) st_.add(i, q_before - 1);
        saved = false;  // same partition, but slots reordered
      } else {
        if (after < current) ++res.zealous_accepts;
        current = after;
        saved = false;
      }
    }
    if (touched) refresh_sums();
  }

  State& st_;
  const SearchOptions& opts_;
  std::int64_t run_;
  Rng rng_;
  StopControl& control_;
  std::vector<double> scores_;
  std::vector<std::int64_t> order_, free_;
  // Sweetening: the state's version (bumped on every change) at which each item last chose
  // to stay; versions start at 1 so that 0 means never.
  std::uint64_t version_ = 0;
  std::vector<std::uint64_t> stayed_;
};

// How run_salso builds its per-thread states: Serial for states whose construction may call
// back into Python; Parallel, each on its own thread (first touched there), for the built-in ones.
enum class StateBuild { Serial, Parallel };

// Runs opts.n_runs independent runs in parallel, run r on the random stream (seed, r) whatever
// the threads, on per-thread states from `make_state`. A run's exception stops the search.
template <class MakeState>
SearchResult run_salso(MakeState make_state, const SearchOptions& opts, Monitor monitor,
                       StateBuild build = StateBuild::Serial) {
  SearchResult out;
  StopControl control(std::move(monitor), opts.n_runs);
  std::atomic<std::int64_t> completed{0};
  std::atomic<double> busy_seconds{0.0};
  bool budget_hit = false;
  const auto t0 = Clock::now();
  int threads = opts.n_jobs > 0 ? opts.n_jobs : 1;
  if (threads > opts.n_runs) threads = static_cast<int>(opts.n_runs);
  threads = usable_threads(threads);

  // States are built up front, so an allocation failure surfaces before any run starts.
  std::vector<decltype(make_state())> states(static_cast<std::size_t>(threads));
  if (build == StateBuild::Parallel && threads > 1)
    parallel_for(threads, threads, nullptr, [&](std::int64_t t, int) { states[static_cast<std::size_t>(t)] = make_state(); });
  else
    for (auto& s : states) s = make_state();
  using State = std::remove_reference_t<decltype(*states[0])>;
  bool nested = false;  // whether runs open parallel regions inside (see below)
  Helping helping;
  if constexpr (has_set_threads<State>::value) {
    // By default threads help each other's runs (Crew), including n_jobs beyond the runs.
    int inner = opts.inner_threads;
    if (inner <= 0) {
      helping.on = true;
      helping.extra = std::max(1, opts.n_jobs) - threads;
      inner = 1;
    }
    inner = usable_threads(inner);
    for (auto& s : states) s->set_threads(inner);
    nested = inner > 1;
  }

  // Only finished runs are recorded, and only the best run's labels are kept.
  std::mutex record_mutex;
  auto run_one = [&](std::int64_t r, int thread) {
    if (opts.seconds > 0 && r > 0) {
      const std::int64_t done = completed.load();
      const double mean = done > 0 ? busy_seconds.load() / static_cast<double>(done) : 0.0;
      if (seconds_since(t0) + mean > opts.seconds) {
        std::lock_guard<std::mutex> lock(record_mutex);
        budget_hit = true;
        return false;
      }
    }
    SalsoRun<State> run(*states[thread], opts, r, control);
    RunResult res = run();
    res.run = opts.first_run + r;
    completed.fetch_add(1);
    double cur = busy_seconds.load();
    while (!busy_seconds.compare_exchange_weak(cur, cur + res.seconds)) {
    }
    std::lock_guard<std::mutex> lock(record_mutex);
    control.record(res.loss);
    const bool better = out.best_labels.empty() || res.loss < out.best_loss ||
                        (res.loss == out.best_loss && res.run < out.best_run);
    if (better) {
      out.best_loss = res.loss;
      out.best_run = res.run;
      out.best_labels = std::move(res.labels);
    }
    res.labels.clear();
    out.runs.push_back(std::move(res));
    return true;
  };
  {
#ifdef _OPENMP
    // Threads inside a run open a region nested in the runs' one: libgomp allows one active
    // level unless told otherwise. Raised for this search only.
    const int levels = omp_get_max_active_levels();
    const bool raise = threads > 1 && nested && levels < 2;
    if (raise) omp_set_max_active_levels(2);
    struct Restore {
      int levels;
      bool raise;
      ~Restore() {
        if (raise) omp_set_max_active_levels(levels);
      }
    } restore{levels, raise};
#endif
    for_each_run(threads, opts.n_runs, control, run_one, helping);
  }
  out.interrupted = control.interrupted();
  out.budget_exhausted = budget_hit;
  out.seconds = seconds_since(t0);
  std::sort(out.runs.begin(), out.runs.end(), [](const RunResult& x, const RunResult& y) { return x.run < y.run; });
  out.runs_done = static_cast<std::int64_t>(out.runs.size());
  for (std::size_t p = 0; p < out.runs.size(); ++p)
    if (out.runs[p].run == out.best_run) out.best = static_cast<std::int64_t>(p);
  return out;
}

}  // namespace salsox
