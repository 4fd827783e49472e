// Bindings of the generic (callback) path: losses written in Python as functions of contingency
// tables. Each callback takes the GIL and hands the callable a read-only int64 array of tables.
// Python exceptions travel as pybind11::error_already_set (safe to hold and destroy without the
// GIL), stop all runs, and are re-raised unchanged to the caller.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "salsox/draws.hpp"
#include "salsox/search.hpp"
#include "common.hpp"
#include "engine_calls.hpp"
#include "plugin_calls.hpp"

namespace py = pybind11;
using namespace salsox;
using namespace salsox::bindings;

namespace {

// Default cap on the int64 cells of one batch: 32 MiB of tables per thread.
constexpr std::int64_t kDefaultMaxCells = std::int64_t{1} << 22;

// Wraps `fn` (tables -> float64 losses of shape (B,)). Holds a borrowed handle: the caller
// keeps `fn` alive for the duration of the search, and copying the std::function between
// threads must not touch Python reference counts. With `calls` (a search, whose runs share
// them): once stopped, throws SearchAborted (which ends the thread's run) instead of calling
// Python; an exception from a call stops them before the GIL is released, so that no other
// thread starts a call after it, and a call in flight that stopping interrupted (with
// KeyboardInterrupt) ends as that stop (SearchAborted), not as an error of the loss.
TableLossFn python_table_loss(py::handle fn, std::shared_ptr<PluginCalls> calls = nullptr) {
  return [fn, calls](const TableBuffer& buffer, std::int64_t B, std::int32_t R, std::int32_t C, double* out) {
    if (calls && calls->stopped()) throw SearchAborted{};
    py::gil_scoped_acquire gil;
    if (calls && calls->stopped()) throw SearchAborted{};  // stopped while this thread waited for the GIL
    std::optional<PluginCalls::Call> call;
    if (calls) call.emplace(*calls);
    try {
      // The array keeps the buffer alive if the callee holds on to it.
      py::capsule owner(new TableBuffer(buffer), [](void* p) { delete static_cast<TableBuffer*>(p); });
      py::array_t<std::int64_t> tables({static_cast<py::ssize_t>(B), static_cast<py::ssize_t>(R),
                                        static_cast<py::ssize_t>(C)},
                                       buffer->data(), owner);
      py::detail::array_proxy(tables.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
      py::object result = fn(tables);
      auto values = CArray<double>::ensure(result);
      if (!values || values.ndim() != 1 || values.shape(0) != B)
        throw std::runtime_error("loss callback must return a 1-D float array with one value per table (" +
                                 std::to_string(B) + ")");
      std::copy(values.data(), values.data() + B, out);
    } catch (py::error_already_set& e) {
      // An interrupted call ends as the stop, whatever the loss made of the interruption: what
      // stopped the search (Ctrl-C, a progress error, another call's error) is raised instead.
      if (call && call->end()) throw SearchAborted{};
      if (calls) calls->stop();
      throw;
    } catch (...) {
      if (calls) calls->stop();
      throw;
    }
  };
}

// `monitor`, also stopping `calls` when it stops the search (Ctrl-C, a progress callable's error).
Monitor stopping(Monitor monitor, std::shared_ptr<PluginCalls> calls) {
  if (!monitor) return monitor;
  return [monitor = std::move(monitor), calls = std::move(calls)](const Progress& p) {
    const bool halt = monitor(p);
    if (halt && !calls->stopped()) {
      py::gil_scoped_acquire gil;
      calls->stop();
    }
    return halt;
  };
}

std::int64_t check_max_cells(std::int64_t max_cells) {
  if (max_cells < 1) throw std::invalid_argument("max_cells must be >= 1");
  return max_cells;
}

}  // namespace

void bind_plugins(py::module_& m) {
  m.def(
      "callback_losses",
      [](const CompactDraws& draws, py::function loss, const CArray<std::int32_t>& estimates, std::int64_t max_cells) {
        check_estimates(estimates, draws.n());
        check_max_cells(max_cells);
        const std::int64_t M = estimates.shape(0);
        const std::int32_t* e = estimates.data();
        const TableLayout layout(draws.clusters_per_draw().data(), draws.H());
        const TableLossFn fn = python_table_loss(loss);
        const std::vector<double> out =
            without_gil([&](Interrupt* stop) { return callback_losses(draws, layout, fn, e, M, max_cells, stop); });
        return to_array(out);
      },
      py::arg("draws"), py::arg("loss"), py::arg("estimates"), py::arg("max_cells") = kDefaultMaxCells,
      "Monte Carlo expected loss of each estimate row under a table-loss callback.");

  def_salso<const CompactDraws&, py::function, std::int64_t>(
      m, "salso_callback",
      "SALSO search minimising the mean over draws of a table-loss callback (the generic path).",
      [](const CompactDraws& draws, py::function loss, std::int64_t max_cells, std::int32_t max_clusters) {
        check_max_cells(max_cells);
        // `loss` outlives the search: pybind11 holds the argument until the call returns.
        auto layout = std::make_shared<TableLayout>(draws.clusters_per_draw().data(), draws.H());
        auto calls = std::make_shared<PluginCalls>();
        const TableLossFn fn = python_table_loss(loss, calls);
        return PreparedSearch{draws.n(), [&draws, layout, fn, calls, max_clusters, max_cells](
                                             const SearchOptions& opts, Monitor monitor) {
                                return callback_search(draws, *layout, fn, max_clusters, max_cells, opts,
                                                       stopping(std::move(monitor), calls));
                              }};
      },
      py::arg("draws"), py::arg("loss"), py::arg("max_cells"));
}
