// Helpers shared by the binding files (module.cpp, countsum.cpp, plugins.cpp, chips.cpp, wasabi.cpp).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <limits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <stdexcept>
#include <vector>

#include "salsox/options.hpp"
#include "salsox/search.hpp"

namespace salsox::bindings {

namespace py = pybind11;

// numpy's flag for data aligned for its dtype. A pickle-5 buffer or a view at a byte offset may
// start at any address, and reading it through an Int* is undefined behaviour.
constexpr int kAligned = py::detail::npy_api::NPY_ARRAY_ALIGNED_;

// A C-contiguous, aligned array of Int: numpy converts (copies) whatever is not.
template <class Int>
using CArray = py::array_t<Int, py::array::c_style | py::array::forcecast | kAligned>;

// A copy of v as a 1-D numpy array.
template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

// What stops an engine call from Python, polled from the calling thread while the GIL is
// released (at most every 50 ms, by Interrupt or StopControl): Ctrl-C, whose KeyboardInterrupt
// comes from Python's signal handler; an exception from `stop()` (WASABI's starts run on worker
// threads, where Python runs no signal handler); and in a search, an exception from
// `progress(runs_done, runs_total, best_loss, seconds)`. That callable hears of finished runs
// and, in between, about twice a second, calls spaced by at least the previous call's time so
// that a slow callable cannot stall the search.
class PythonStop {
 public:
  explicit PythonStop(py::object progress = py::none(), py::object stop = py::none())
      : progress_(std::move(progress)), stop_(std::move(stop)) {}
  PythonStop(const PythonStop&) = delete;
  PythonStop& operator=(const PythonStop&) = delete;

  // A search's monitor; the interrupt of an engine call that is not a search.
  Monitor monitor() {
    return [this](const Progress& p) { return poll(&p); };
  }
  Interrupt* interrupt() { return &interrupt_; }

  // With the GIL held, after the call: raises the exception that stopped it (the callable's,
  // or whatever a signal handler raised), or KeyboardInterrupt when `stopped` without one.
  void raise_if(bool stopped) {
    if (error_) std::rethrow_exception(error_);
    if (stopped) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
  }

  // With the GIL held, after a search that ran to its end: reports its final state once more
  // (so a bar ends on the true count).
  void report_final(const SearchResult& res, std::int64_t runs_total) {
    if (progress_.is_none()) return;
    const double best = res.best_labels.empty() ? std::numeric_limits<double>::infinity() : res.best_loss;
    progress_(res.runs_done, runs_total, best, res.seconds);
  }

 private:
  // Whether the call must stop; never throws (what stopped it is kept in error_).
  bool poll(const Progress* p) {
    py::gil_scoped_acquire acquire;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!stop_.is_none()) stop_();
      if (p && !progress_.is_none()) report_if_due(*p);
    } catch (...) {
      error_ = std::current_exception();
      return true;
    }
    return false;
  }

  void report_if_due(const Progress& p) {
    const bool news = p.runs_done != last_done_;
    if (seconds_since(last_end_) < (news ? last_took_ : std::max(0.5, last_took_))) return;
    last_done_ = p.runs_done;
    const auto start = Clock::now();
    progress_(p.runs_done, p.runs_total, p.best_loss, p.seconds);
    last_end_ = Clock::now();
    last_took_ = std::chrono::duration<double>(last_end_ - start).count();
  }

  py::object progress_, stop_;
  std::exception_ptr error_;
  Interrupt interrupt_{[this] { return poll(nullptr); }};
  std::int64_t last_done_ = -1;
  Clock::time_point last_end_ = Clock::now() - std::chrono::hours(1);
  double last_took_ = 0.0;
};

// f(interrupt) with the GIL released, for an engine call that is not a search (loss
// evaluation, co-clustering counts): stopped as PythonStop says, and what stopped it re-raised.
template <class F>
auto without_gil(F&& f, py::object stop = py::none()) {
  PythonStop python(py::none(), std::move(stop));
  auto call = [&] {
    py::gil_scoped_release release;
    return f(python.interrupt());
  };
  if constexpr (std::is_void_v<decltype(call())>) {
    call();
    python.raise_if(python.interrupt()->stopped());
  } else {
    auto out = call();
    python.raise_if(python.interrupt()->stopped());
    return out;
  }
}

// Partitions (estimates, particles) as rows of n labels, each in 0..n-1, or -1 for an
// unallocated item where `unallocated` allows it: the labels index the engine's tables.
inline void check_estimates(const CArray<std::int32_t>& rows, std::int64_t n, const std::string& what = "estimates",
                            bool unallocated = false) {
  if (rows.ndim() != 2 || rows.shape(1) != n) throw std::invalid_argument(what + " must be rows of n labels");
  const std::int32_t lowest = unallocated ? -1 : 0;
  const std::int32_t* e = rows.data();
  for (py::ssize_t x = 0; x < rows.size(); ++x)
    if (e[x] < lowest || e[x] >= n)
      throw std::invalid_argument(what + " labels must be in " + (unallocated ? "-1, " : "") + "0..n-1");
}

using Initial = std::optional<CArray<std::int32_t>>;
using InitialUsed = std::optional<CArray<std::uint8_t>>;

inline SearchOptions make_options(std::int64_t n_runs, std::int32_t max_zealous, double prob_sequential,
                           std::int64_t max_scans, double seconds, int n_jobs, std::uint64_t seed,
                           const Initial& initial, const InitialUsed& used, std::int64_t n,
                           std::int32_t max_clusters) {
  if (n_runs < 1) throw std::invalid_argument("n_runs must be >= 1");
  if (max_clusters < 1 || max_clusters > n) throw std::invalid_argument("max_clusters out of range");
  SearchOptions o;
  o.n_runs = n_runs;
  o.max_zealous = max_zealous;
  o.prob_sequential = prob_sequential;
  o.max_scans = max_scans;
  o.seconds = seconds;
  o.n_jobs = n_jobs;
  o.seed = seed;
  if (initial.has_value() != used.has_value()) throw std::invalid_argument("initial and initial_used go together");
  if (initial) {
    if (initial->ndim() != 2 || initial->shape(0) != n_runs || initial->shape(1) != n ||
        used->ndim() != 1 || used->shape(0) != n_runs)
      throw std::invalid_argument("initial must be n_runs x n and initial_used of length n_runs");
    const std::int32_t* lab = initial->data();
    for (std::int64_t r = 0; r < n_runs; ++r) {
      if (!used->data()[r]) continue;
      // Slots must be 0..q-1 with q <= max_clusters, each occupied.
      std::vector<std::uint8_t> seen(static_cast<std::size_t>(max_clusters), 0);
      std::int32_t top = -1;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int32_t c = lab[r * n + i];
        if (c < 0 || c >= max_clusters) throw std::invalid_argument("initial labels must be in 0..max_clusters-1");
        seen[c] = 1;
        top = std::max(top, c);
      }
      for (std::int32_t c = 0; c <= top; ++c)
        if (!seen[c]) throw std::invalid_argument("initial labels must be 0..q-1 without gaps");
    }
    o.initial = lab;
    o.initial_used = used->data();
  }
  return o;
}

using Fixed = std::optional<CArray<std::int32_t>>;

// Fixed items (salso(..., fixed=)): n labels, -1 free, fixed clusters 0..F-1 in order of first
// appearance, F <= max_clusters. Whether the given starts agree with them is checked where a
// user reads the message (salsox/search/fixed.py): a start that does not indexes nothing out of
// range (it only leaves its fixed items where it put them).
inline void set_fixed(SearchOptions& o, const Fixed& fixed, std::int64_t n, std::int32_t max_clusters) {
  if (!fixed) return;
  if (fixed->ndim() != 1 || fixed->shape(0) != n) throw std::invalid_argument("fixed must have n labels");
  const std::int32_t* f = fixed->data();
  std::int32_t next = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (f[i] < -1 || f[i] > next) throw std::invalid_argument("fixed labels must be -1 or 0..F-1 in order of first appearance");
    if (f[i] == next) ++next;
  }
  if (next > max_clusters) throw std::invalid_argument("max_clusters is below the number of fixed clusters");
  o.fixed = f;
  o.n_fixed = next;
}

// The result of a search that ran to its end as a dict; with `debug`, each run also has
// "sums_drift", "score_threads" and "zealous_rounds" (per round, its starting "labels" and the
// members of each cluster "tried").
inline py::dict to_python(const SearchResult& res, bool debug = false) {
  py::list runs;
  for (const auto& r : res.runs) {
    py::dict d;
    d["run"] = r.run;
    d["done"] = r.done;
    d["loss"] = r.loss;
    d["initialization"] = r.given        ? "initializer"
                          : r.singletons ? "singletons"
                          : r.sequential ? "sequential"
                                         : "random";
    d["scans"] = r.scans;
    d["zealous_attempts"] = r.zealous_attempts;
    d["zealous_accepts"] = r.zealous_accepts;
    d["seconds"] = r.seconds;
    d["threads"] = r.threads;
    if (debug) {
      d["sums_drift"] = r.sums_drift;
      d["score_threads"] = r.score_threads;
      py::list rounds;
      for (const auto& labels : r.zealous_starts) {
        py::dict round;
        round["labels"] = to_array(labels);
        round["tried"] = py::list();
        rounds.append(round);
      }
      for (std::size_t t = 0; t < r.zealous_tried.size(); ++t) {
        rounds[r.zealous_round[t]]["tried"].cast<py::list>().append(to_array(r.zealous_tried[t]));
      }
      d["zealous_rounds"] = rounds;
    }
    runs.append(d);
  }
  py::dict out;
  out["runs"] = runs;
  out["best"] = res.best;
  out["runs_done"] = res.runs_done;
  out["budget_exhausted"] = res.budget_exhausted;
  out["seconds"] = res.seconds;
  if (res.best >= 0) {
    out["labels"] = to_array(res.best_labels);
  }
  return out;
}

// What a salso_* entry point hands def_salso once its own arguments are checked (with the GIL
// held): the number of items, and the search itself, run with the GIL released.
struct PreparedSearch {
  std::int64_t n = 0;
  std::function<SearchResult(const SearchOptions&, Monitor)> run;
};

// Defines the SALSO entry point `name`: its own leading arguments (types Lead..., names
// `lead_names`) followed by the search options that every entry point takes, in this order:
//   max_clusters, n_runs, max_zealous, prob_sequential, max_scans, seconds, n_jobs, seed,
//   initial=None, initial_used=None, first_run=0, inner_threads=0, progress=None,
//   debug=False (tests: see to_python), fixed=None (see set_fixed), prob_singletons=0.
// `prepare(lead..., max_clusters)` checks the leading arguments and returns a PreparedSearch;
// the rest is handled here, once for all entry points. An entry point whose search takes
// EngineOptions has `prepare(lead..., max_clusters, engine)`, engine the keyword argument
// `engine` (an _core.EngineOptions: tests force a path with it) or, when None, nullopt.
template <class... Lead, class Prepare, class... Names>
void def_salso(py::module_& m, const char* name, const char* doc, Prepare prepare, Names... lead_names) {
  static_assert(sizeof...(Lead) == sizeof...(Names), "one name per leading argument");
  m.def(
      name,
      [prepare, name](Lead... lead, std::int32_t max_clusters, std::int64_t n_runs, std::int32_t max_zealous,
                double prob_sequential, std::int64_t max_scans, double seconds, int n_jobs, std::uint64_t seed,
                const Initial& initial, const InitialUsed& initial_used, std::int64_t first_run,
                int inner_threads, py::object progress, bool debug, const Fixed& fixed,
                double prob_singletons, const std::optional<EngineOptions>& engine) {
        if (!(prob_singletons >= 0.0 && prob_singletons <= 1.0))
          throw std::invalid_argument("prob_singletons must be in [0, 1]");
        PreparedSearch search;
        if constexpr (std::is_invocable_v<Prepare, Lead..., std::int32_t, const std::optional<EngineOptions>&>) {
          search = prepare(lead..., max_clusters, engine);
        } else {
          if (engine) throw std::invalid_argument(std::string(name) + " takes no engine options");
          search = prepare(lead..., max_clusters);
        }
        auto opts = make_options(n_runs, max_zealous, prob_sequential, max_scans, seconds, n_jobs, seed,
                                 initial, initial_used, search.n, max_clusters);
        set_fixed(opts, fixed, search.n, max_clusters);
        opts.first_run = first_run;
        opts.inner_threads = inner_threads;
        opts.debug = debug;
        opts.prob_singletons = prob_singletons;
        SearchResult res;
        PythonStop python(std::move(progress));
        {
          py::gil_scoped_release release;
          res = search.run(opts, python.monitor());
        }
        python.raise_if(res.interrupted);
        python.report_final(res, opts.n_runs);
        return to_python(res, debug);
      },
      lead_names..., py::arg("max_clusters"), py::arg("n_runs"), py::arg("max_zealous"),
      py::arg("prob_sequential"), py::arg("max_scans"), py::arg("seconds"), py::arg("n_jobs"), py::arg("seed"),
      py::arg("initial") = py::none(), py::arg("initial_used") = py::none(), py::arg("first_run") = 0,
      py::arg("inner_threads") = 0, py::arg("progress") = py::none(), py::arg("debug") = false,
      py::arg("fixed") = py::none(), py::arg("prob_singletons") = 0.0, py::arg("engine") = py::none(), doc);
}

}  // namespace salsox::bindings
