// Bindings of the CHIPS engine (salsox/chips.hpp). Validation with friendly messages happens in
// salsox/chips.py; checks here only guard memory safety.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "salsox/draws.hpp"
#include "common.hpp"
#include "engine_calls.hpp"

namespace py = pybind11;
using namespace salsox;
using namespace salsox::bindings;

namespace {

py::dict chips(const CompactDraws& draws, double threshold, std::int64_t n_runs, int n_jobs, std::uint64_t seed,
               const std::string& mode, const std::optional<CArray<std::int32_t>>& initial,
               std::int64_t first_run) {
  if (mode != "path" && mode != "single" && mode != "all") throw std::invalid_argument("unknown chips mode");
  const std::int32_t* init = nullptr;
  if (initial) {
    if (initial->ndim() != 1 || initial->shape(0) != draws.n()) throw std::invalid_argument("initial must have n labels");
    init = initial->data();
  }
  const ChipsOptions opts{n_runs, threshold, n_jobs, seed, first_run};
  ChipsOutcome outcome;
  PythonStop python;
  {
    py::gil_scoped_release release;
    outcome = chips_runs(draws, init, opts, mode == "path", python.monitor());
  }
  const ChipsStart& start = outcome.start;
  const ChipsRuns& res = outcome.runs;
  std::vector<ChipsRow>& rows = outcome.rows;
  python.raise_if(res.interrupted);
  if (mode == "single") rows.resize(1);
  const auto n = draws.n();
  const auto m = static_cast<py::ssize_t>(rows.size());
  // Path rows come without labels (the caller rebuilds them from the runs' steps); the others
  // with theirs, one row per run at most.
  const bool path = mode == "path";
  py::array_t<std::int32_t> labels({path ? py::ssize_t{0} : m, static_cast<py::ssize_t>(n)});
  py::array_t<std::int64_t> counts(m), sizes(m), run_of(m), position(m);
  py::list unallocated;
  for (py::ssize_t r = 0; r < m; ++r) {
    const auto& row = rows[static_cast<std::size_t>(r)];
    if (!path) std::copy(row.labels.begin(), row.labels.end(), labels.mutable_data() + r * n);
    counts.mutable_data()[r] = row.count;
    sizes.mutable_data()[r] = row.size;
    position.mutable_data()[r] = row.run;
    const auto& run = res.runs[static_cast<std::size_t>(row.run)];
    run_of.mutable_data()[r] = run.run;
    if (row.final_state) unallocated.append(py::make_tuple(to_array(run.unallocated), to_array(run.unallocated_counts)));
    else unallocated.append(py::none());
  }
  py::list runs;
  for (const auto& run : res.runs) {
    py::dict d;
    d["run"] = run.run;
    d["items"] = to_array(run.items);
    d["labels"] = to_array(run.labels);
    d["counts"] = to_array(run.counts);
    d["unallocated"] = to_array(run.unallocated);
    d["unallocated_counts"] = to_array(run.unallocated_counts);
    d["stopped"] = run.stopped;
    runs.append(d);
  }
  py::dict out;
  out["labels"] = labels;
  out["counts"] = counts;
  out["n_items"] = sizes;
  out["run"] = run_of;
  out["position"] = position;  // index into runs
  out["start_labels"] = to_array(start.labels);
  out["unallocated"] = unallocated;
  out["runs"] = runs;
  out["start_count"] = static_cast<std::int64_t>(start.active.size());
  out["start_size"] = start.size;
  return out;
}

// For each row of `labels` (M x n, -1 unallocated): the mask of consistent draws (M x H) and,
// per row, for each cluster the number of draws in which all its members share a label.
py::tuple chips_consistency_rows(const CompactDraws& draws, const CArray<std::int32_t>& labels, int n_jobs) {
  check_estimates(labels, draws.n(), "labels", true);
  const std::int64_t M = labels.shape(0);
  const std::int32_t* lab = labels.data();
  py::array_t<std::uint8_t> mask({static_cast<py::ssize_t>(M), static_cast<py::ssize_t>(draws.H())});
  std::uint8_t* out = mask.mutable_data();
  std::vector<std::vector<std::int64_t>> together(static_cast<std::size_t>(M));
  {
    py::gil_scoped_release release;
    chips_consistency(draws, lab, M, out, together, n_jobs);
  }
  py::list clusters;
  for (const auto& t : together) clusters.append(to_array(t));
  return py::make_tuple(mask, clusters);
}

}  // namespace

void register_chips(py::module_& m) {
  m.def("chips", &chips, py::arg("draws"), py::arg("threshold"), py::arg("n_runs"), py::arg("n_jobs"),
        py::arg("seed"), py::arg("mode"), py::arg("initial") = py::none(), py::arg("first_run") = 0,
        "CHIPS runs and the chosen rows (path, single-best or all final states).");
  m.def("chips_consistency", &chips_consistency_rows, py::arg("draws"), py::arg("labels"), py::arg("n_jobs") = 1,
        "Consistent-draw masks and per-cluster together-counts of sub-partitions.");
}
