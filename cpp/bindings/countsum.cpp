// Bindings of count-sum losses (countsum_loss.hpp): the compiled formula object, the SALSO search
// and the evaluation of given estimates, with the conventions of salso_counts.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "salsox/count_table.hpp"
#include "salsox/countsum_evaluate.hpp"
#include "salsox/countsum_loss.hpp"
#include "salsox/draws.hpp"
#include "salsox/search.hpp"
#include "common.hpp"
#include "engine_calls.hpp"
#include "table_search.hpp"

namespace py = pybind11;
using namespace salsox;
using namespace salsox::bindings;

namespace {

using NodeSpec = std::tuple<std::string, std::int32_t, std::int32_t, std::int32_t, double>;

CountSumLoss make_countsum(const std::string& label, std::int64_t n, std::vector<std::vector<double>> cell,
                           std::vector<std::vector<double>> estimate, std::vector<std::vector<double>> draw,
                           const std::vector<NodeSpec>& nodes, std::int32_t result) {
  if (n < 1) throw std::invalid_argument("n must be >= 1");
  CountSumLoss L;
  L.label = label;
  L.n = n;
  std::vector<std::vector<double>>* kinds[3] = {&cell, &estimate, &draw};
  for (int w = 0; w < 3; ++w) {
    for (auto& t : *kinds[w]) {
      if (static_cast<std::int64_t>(t.size()) != n + 1) throw std::invalid_argument("count-sum tables must have n + 1 entries");
      t.push_back(t.back());  // one spare entry keeps table[x + 1] valid for x = n
      L.g[w].push_back(std::move(t));
    }
  }
  for (const auto& [op, a, b, c, value] : nodes) L.nodes.push_back(CsNode{cs_parse_op(op), a, b, c, value});
  L.result = result;
  L.finalise();
  return L;
}

void check_loss(const CompactDraws& draws, const CountSumLoss& loss) {
  if (loss.n != draws.n()) throw std::invalid_argument("the count-sum loss was tabulated for another number of items");
}

}  // namespace

void bind_countsum(py::module_& m) {
  py::class_<CountSumLoss>(m, "CountSumLoss")
      .def(py::init(&make_countsum), py::arg("label"), py::arg("n"), py::arg("cell"), py::arg("estimate"),
           py::arg("draw"), py::arg("nodes"), py::arg("result"),
           "A compiled count-sum formula: tables g(0..n) per sum, nodes (op, a, b, c, value) in "
           "topological order.")
      .def_property_readonly("n", [](const CountSumLoss& L) { return L.n; })
      .def_property_readonly("label", [](const CountSumLoss& L) { return L.label; })
      .def_property_readonly(
          "program",
          [](const CountSumLoss& L) {
            py::list out;
            for (const CsNode& x : L.nodes)
              out.append(py::make_tuple(cs_op_name(x.op), x.a, x.b, x.c, x.value, x.shape));
            return out;
          },
          "The nodes as (op, a, b, c, value, shape), shape 0 scalar, 1 per slot, 2 per draw, 3 both.")
      .def_property_readonly("result", [](const CountSumLoss& L) { return L.result; })
      .def_property_readonly("dense_kernel", [](const CountSumLoss& L) { return L.dense_kernel != 0; },
                             "Whether the dense scores run compiled code (salsox.engine.countsum_jit).")
      .def(
          "set_dense_kernel", [](CountSumLoss& L, std::uintptr_t address) { L.dense_kernel = address; },
          py::arg("address"),
          "Hands the engine the formula's dense part compiled to native code (countsum_kernel.hpp); the "
          "caller keeps the code alive. 0 removes it.")
      .def(
          "evaluate",
          [](const CountSumLoss& L, double m, const std::vector<double>& cell, const std::vector<double>& estimate,
             const std::vector<double>& draw) {
            if (static_cast<std::int32_t>(cell.size()) != L.sums(SumWhere::Cell) ||
                static_cast<std::int32_t>(estimate.size()) != L.sums(SumWhere::Estimate) ||
                static_cast<std::int32_t>(draw.size()) != L.sums(SumWhere::Draw))
              throw std::invalid_argument("wrong number of sums");
            std::vector<double> scratch;
            return L.evaluate(m, cell.data(), estimate.data(), draw.data(), scratch);
          },
          py::arg("m"), py::arg("cell"), py::arg("estimate"), py::arg("draw"),
          "The formula for given sums (as the engine evaluates it per draw).");

  m.def(
      "countsum_losses",
      [](const CompactDraws& draws, const CountSumLoss& loss, const CArray<std::int32_t>& estimates, int n_jobs,
         double tolerance) {
        check_loss(draws, loss);
        check_estimates(estimates, draws.n());
        const std::int32_t* e = estimates.data();
        const std::int64_t M = estimates.shape(0);
        CountSumViolation bad;
        const std::vector<double> out = without_gil([&](Interrupt* stop) {
          return countsum_losses(draws, loss, e, M, n_jobs, tolerance, bad, stop);
        });
        py::object violation = py::none();
        if (bad.draw >= 0) violation = py::make_tuple(bad.estimate, bad.draw, bad.value);
        return py::make_tuple(to_array(out), violation);
      },
      py::arg("draws"), py::arg("loss"), py::arg("estimates"), py::arg("n_jobs") = 1, py::arg("tolerance") = 1e-9,
      "(expected losses, first violation or None): the first (estimate, draw, value) whose per-draw loss is "
      "below -tolerance or not finite.");

  m.def(
      "countsum_bytes",
      [](const CompactDraws& draws, std::int32_t max_clusters, const CountSumLoss& loss) {
        const std::int64_t rows = draws.rows();
        const double table = count_table_bytes(rows, draws.H(), draws.n(), max_clusters, false);
        const double sums = static_cast<double>(loss.sums(SumWhere::Cell) + loss.sums(SumWhere::Draw));
        // Per-draw nodes of the formula, kept for all draws by the dense scores (at most this many).
        double kept = 0.0;
        for (const CsNode& x : loss.nodes) kept += x.shape == kDraw ? 1.0 : 0.0;
        // The running sums and their snapshot, the kept nodes, and the allocated counts per row and theirs.
        return table + (2.0 * sums + kept) * 8.0 * static_cast<double>(draws.H()) + 2.0 * 4.0 * static_cast<double>(rows);
      },
      py::arg("draws"), py::arg("max_clusters"), py::arg("loss"), "Bytes one search thread's count-sum state takes.");

  m.def(
      "countsum_scores",
      [](const CompactDraws& draws, const CountSumLoss& loss, const CArray<std::int32_t>& labels, std::int64_t item,
         bool allocated, const std::optional<EngineOptions>& given) {
        check_loss(draws, loss);
        const EngineOptions engine = given ? *given : EngineOptions::from_env();
        const std::int64_t n = draws.n();
        if (labels.ndim() != 1 || labels.shape(0) != n) throw std::invalid_argument("labels must have n entries");
        if (item < 0 || item >= n) throw std::invalid_argument("item must be in 0..n-1");
        std::vector<std::int32_t> lab(labels.data(), labels.data() + n);
        std::int32_t q = 0;
        for (const auto x : lab) {
          if (x < 0 || x >= n) throw std::invalid_argument("labels must be in 0..n-1");
          q = std::max(q, x + 1);
        }
        const std::vector<double> out = with_count_type(n, [&](auto count) {
          return countsum_scores<decltype(count)>(draws, loss, lab, q, item, allocated, engine);
        });
        return to_array(out);
      },
      py::arg("draws"), py::arg("loss"), py::arg("labels"), py::arg("item"), py::arg("allocated") = true,
      py::arg("engine") = py::none(),
      "The search's scores of `item` (for tests): the sum over draws of the formula with the item moved to "
      "each slot 0..q (q: a new cluster), from the partition `labels`; with allocated=False the item is "
      "taken out first and scored as unallocated; engine: an _core.EngineOptions (None: the environment's).");

  def_salso<const CompactDraws&, const CountSumLoss&>(
      m, "salso_countsum", "SALSO search minimising the mean over draws of a count-sum formula.",
      [](const CompactDraws& draws, const CountSumLoss& loss, std::int32_t max_clusters,
         const std::optional<EngineOptions>& given) {
        check_loss(draws, loss);
        const EngineOptions engine = given ? *given : EngineOptions::from_env();
        return PreparedSearch{draws.n(), [&draws, &loss, max_clusters, engine](const SearchOptions& opts, Monitor monitor) {
                                return with_table_search(draws, loss, max_clusters, engine, opts, std::move(monitor));
                              }};
      },
      py::arg("draws"), py::arg("loss"));
}
