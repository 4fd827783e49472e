// Thin pybind11 layer: converts arrays, releases the GIL around engine calls, turns C++ errors
// into Python exceptions and lets Ctrl-C stop a search. Validation with friendly messages
// happens in the Python package; checks here only guard memory safety.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <pthread.h>

#include <cstdint>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include "salsox/count_loss.hpp"
#include "salsox/count_table.hpp"
#include "salsox/draws.hpp"
#include "salsox/evaluate.hpp"
#include "salsox/search.hpp"
#include "common.hpp"
#include "engine_calls.hpp"
#include "table_search.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace py = pybind11;
using namespace salsox;
using namespace salsox::bindings;

void bind_plugins(py::module_& m);  // plugins.cpp
void register_chips(py::module_& m);  // chips.cpp
void bind_countsum(py::module_& m);  // countsum.cpp
void register_wasabi(py::module_& m);  // wasabi.cpp

namespace {

template <class Int>
CompactDraws* make_draws_typed(const py::array& raw) {
  const auto H = raw.shape(0), n = raw.shape(1);
  const Int* data = static_cast<const Int*>(raw.data());
  py::gil_scoped_release release;
  return new_compact_draws(data, H, n);
}

// The labels exactly as given, dispatched on their dtype: nothing is converted here, because a
// converting overload would narrow them (forcecast to uint8 merges labels 256 apart).
CompactDraws* make_draws(const py::array& given) {
  if (given.ndim() != 2) throw std::invalid_argument("draws must be a 2-D array");
  // Aligned for its dtype (copied if not), so that the labels may be read through an Int*.
  const py::array raw = py::array::ensure(given, kAligned);
  if (!raw) throw std::bad_alloc();  // ensure fails only when the copy cannot be made
  if (!(raw.flags() & py::array::c_style))
    throw std::invalid_argument("draws must be a C-contiguous array (internal: pass np.ascontiguousarray)");
  const py::dtype dt = raw.dtype();
  if (dt.byteorder() == '>' || dt.byteorder() == '<')  // '=' or '|' are native
    throw std::invalid_argument("draws must be in native byte order (internal: convert first)");
  const bool u = dt.kind() == 'u';
  if (u || dt.kind() == 'i') {
    switch (dt.itemsize()) {
      case 1: return u ? make_draws_typed<std::uint8_t>(raw) : make_draws_typed<std::int8_t>(raw);
      case 2: return u ? make_draws_typed<std::uint16_t>(raw) : make_draws_typed<std::int16_t>(raw);
      case 4: return u ? make_draws_typed<std::uint32_t>(raw) : make_draws_typed<std::int32_t>(raw);
      case 8: return u ? make_draws_typed<std::uint64_t>(raw) : make_draws_typed<std::int64_t>(raw);
    }
  }
  throw py::type_error("draws must be an integer array, got dtype " + std::string(py::str(dt)));
}

LossKind parse_kind(const std::string& kind) {
  if (kind == "binder") return LossKind::Binder;
  if (kind == "VI") return LossKind::VI;
  if (kind == "omARI") return LossKind::OMARI;
  if (kind == "NVI") return LossKind::NVI;
  if (kind == "ID") return LossKind::ID;
  if (kind == "NID") return LossKind::NID;
  throw std::invalid_argument("unknown count-based loss '" + kind + "'");
}

PairwiseKind parse_pairwise(const std::string& kind) {
  if (kind == "binder") return PairwiseKind::Binder;
  if (kind == "VI.lb") return PairwiseKind::VILowerBound;
  if (kind == "omARI.approx") return PairwiseKind::OMARIApprox;
  throw std::invalid_argument("unknown pairwise loss '" + kind + "'");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "salsox C++ engine (internal; use the salsox package)";
  // A child forked after the engine used threads runs single-threaded (see usable_threads).
  pthread_atfork(nullptr, nullptr, &note_fork_child);

  py::class_<CompactDraws>(m, "CompactDraws")
      .def(py::init(&make_draws), py::arg("labels"))
      .def("labels_matrix",
           [](const CompactDraws& d) -> py::array {
             // H x n relabelled draws in the stored width (for pickling and workers).
             return d.visit([&](auto v) -> py::array {
               using Label = std::remove_const_t<std::remove_pointer_t<decltype(v.labels)>>;
               py::array_t<Label> out({v.H, v.n});
               Label* o = out.mutable_data();
               for (std::int64_t i = 0; i < v.n; ++i)
                 for (std::int64_t h = 0; h < v.H; ++h) o[h * v.n + i] = v.item(i)[h];
               return out;
             });
           })
      .def_property_readonly("n", &CompactDraws::n)
      .def_property_readonly("H", &CompactDraws::H)
      .def_property_readonly("kmax", &CompactDraws::kmax)
      .def_property_readonly("label_bits", [](const CompactDraws& d) { return d.wide() ? 16 : 8; })
      .def_property_readonly("nbytes", &CompactDraws::label_bytes)
      .def_property_readonly("clusters_per_draw", [](const CompactDraws& d) { return to_array(d.clusters_per_draw()); })
      .def("draw", [](const CompactDraws& d, std::int64_t h) {
        if (h < 0 || h >= d.H()) throw py::index_error("draw index out of range");
        return to_array(d.draw(h));
      });

  py::class_<CountLoss>(m, "CountLoss")
      .def_static(
          "builtin",
          [](const std::string& kind, double a, double b, std::int64_t n) {
            return CountLoss::builtin(parse_kind(kind), a, b, n);
          },
          py::arg("kind"), py::arg("a"), py::arg("b"), py::arg("n"))
      .def_static(
          "tabulated",
          [](std::vector<double> g_draw, std::vector<double> g_est, std::vector<double> g_cell) {
            return CountLoss::tabulated(std::move(g_draw), std::move(g_est), std::move(g_cell));
          },
          py::arg("g_draw"), py::arg("g_est"), py::arg("g_cell"))
      .def_property_readonly("n", [](const CountLoss& L) { return static_cast<std::int64_t>(L.g_cell.size()) - 2; })
      .def_property_readonly("additive", &CountLoss::additive);

  m.def(
      "expected_losses",
      [](const CompactDraws& draws, const CountLoss& loss, const CArray<std::int32_t>& estimates,
         int n_jobs) {
        check_estimates(estimates, draws.n());
        if (static_cast<std::int64_t>(loss.g_cell.size()) < draws.n() + 2)
          throw std::invalid_argument("loss tables are shorter than n + 1");
        const std::int64_t M = estimates.shape(0);
        const std::int32_t* e = estimates.data();
        const std::vector<double> out =
            without_gil([&](Interrupt* stop) { return expected_losses(draws, loss, e, M, n_jobs, stop); });
        return to_array(out);
      },
      py::arg("draws"), py::arg("loss"), py::arg("estimates"), py::arg("n_jobs") = 1);

  m.def(
      "expected_losses_bytes",
      [](const CompactDraws& draws, std::int32_t q, std::int64_t M, int n_jobs) {
        return draws.visit([&](auto v) { return expected_losses_bytes(v, std::max<std::int32_t>(1, q), M, n_jobs); });
      },
      "Bytes expected_losses allocates for M estimates of up to q clusters on n_jobs threads.",
      py::arg("draws"), py::arg("q"), py::arg("M"), py::arg("n_jobs") = 1);

  m.def(
      "pairwise_losses",
      [](const CArray<double>& psm, const std::string& kind, double a, double b,
         const CArray<std::int32_t>& estimates, int n_jobs) {
        const std::int64_t n = psm.shape(0);
        if (psm.ndim() != 2 || psm.shape(1) != n) throw std::invalid_argument("psm must be n x n");
        check_estimates(estimates, n);
        const std::int64_t M = estimates.shape(0);
        const auto pk = parse_pairwise(kind);
        const std::vector<double> out = without_gil([&](Interrupt* stop) {
          return psm_losses(psm.data(), n, pk, a, b, estimates.data(), M, n_jobs, stop);
        });
        return to_array(out);
      },
      py::arg("psm"), py::arg("kind"), py::arg("a"), py::arg("b"), py::arg("estimates"),
      py::arg("n_jobs") = 1);

  // The n x n co-clustering counts (int32) or their share of the draws (the PSM, float64).
  auto coclustering_matrix = [](auto zero) {
    return [](const CompactDraws& draws, int n_jobs) {
      py::array_t<decltype(zero)> out({draws.n(), draws.n()});
      auto* o = out.mutable_data();
      without_gil([&](Interrupt* stop) { coclustering(draws, o, n_jobs, stop); });
      return out;
    };
  };
  m.def("coclustering", coclustering_matrix(std::int32_t{}), py::arg("draws"), py::arg("n_jobs") = 1);
  m.def("psm_matrix", coclustering_matrix(double{}),
        "The posterior similarity matrix (co-clustering counts / H), n x n float64, built in place.",
        py::arg("draws"), py::arg("n_jobs") = 1);

  m.def(
      "count_table_bytes",
      [](const CompactDraws& draws, std::int32_t max_clusters, const CountLoss& loss) {
        return count_table_bytes(draws.rows(), draws.H(), draws.n(), max_clusters, !loss.additive(),
                                 scores_by_cell_sums(loss.kind));
      },
      py::arg("draws"), py::arg("max_clusters"), py::arg("loss"),
      "Bytes one search thread's count-table state takes.");

  def_salso<const CompactDraws&, const CountLoss&>(
      m, "salso_counts", "SALSO search for a count-based loss over the draws' contingency tables.",
      [](const CompactDraws& draws, const CountLoss& loss, std::int32_t max_clusters,
         const std::optional<EngineOptions>& given) {
        if (static_cast<std::int64_t>(loss.g_cell.size()) < draws.n() + 2)
          throw std::invalid_argument("loss tables are shorter than n + 1");
        // Read once, here: a setting it cannot honour is a ValueError now, not a silent fallback.
        const EngineOptions engine = given ? *given : EngineOptions::from_env();
        return PreparedSearch{draws.n(), [&draws, &loss, max_clusters, engine](const SearchOptions& opts, Monitor monitor) {
                                return with_table_search(draws, loss, max_clusters, engine, opts, std::move(monitor));
                              }};
      },
      py::arg("draws"), py::arg("loss"));

  def_salso<const CArray<std::int32_t>&, std::int64_t, double, double>(
      m, "salso_coclustering_binder", "SALSO search for Binder's loss from co-clustering counts over H draws.",
      [](const CArray<std::int32_t>& co, std::int64_t H, double a, double b, std::int32_t max_clusters) {
        const std::int64_t n = co.shape(0);
        if (co.ndim() != 2 || co.shape(1) != n) throw std::invalid_argument("co-clustering counts must be n x n");
        const std::int32_t* sim = co.data();
        return PreparedSearch{n, [=](const SearchOptions& opts, Monitor monitor) {
                                return pairwise_search(sim, n, static_cast<double>(H), PairwiseKind::Binder, a, b,
                                                       max_clusters, opts, std::move(monitor));
                              }};
      },
      py::arg("co"), py::arg("H"), py::arg("a"), py::arg("b"));

  def_salso<const CArray<double>&, const std::string&, double, double>(
      m, "salso_psm", "SALSO search for a pairwise loss from a posterior similarity matrix.",
      [](const CArray<double>& psm, const std::string& kind, double a, double b, std::int32_t max_clusters) {
        const std::int64_t n = psm.shape(0);
        if (psm.ndim() != 2 || psm.shape(1) != n) throw std::invalid_argument("psm must be n x n");
        const auto pk = parse_pairwise(kind);
        const double* sim = psm.data();
        return PreparedSearch{n, [=](const SearchOptions& opts, Monitor monitor) {
                                return pairwise_search(sim, n, 1.0, pk, a, b, max_clusters, opts, std::move(monitor));
                              }};
      },
      py::arg("psm"), py::arg("kind"), py::arg("a"), py::arg("b"));

  bind_plugins(m);
  register_chips(m);
  bind_countsum(m);
  register_wasabi(m);

  m.def("max_threads", [] {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
  });
  m.def("set_usable_cpus", [](int cpus) { cpus_allowed().store(std::max(0, cpus)); }, py::arg("cpus"),
        "The CPUs the process may use (affinity and cgroup quota, from salsox._cpus); 0 forgets it.");
  m.def("usable_cpus", [] { return usable_cpus(); },
        "The CPUs the engine's loops and crews keep their threads awake on at most.");
  m.def("forked_child", [] { return g_forked_child.load(); },
        "Whether this is a child forked after the engine used threads (it then uses one).");
  py::class_<EngineOptions>(m, "EngineOptions",
                            "The engine's optional paths of one search (cpp/include/salsox/options.hpp), for\n"
                            "tests: EngineOptions() is every path on at the widest SIMD path; pass it as\n"
                            "engine= to salso_counts or salso_countsum instead of the environment's settings.")
      .def(py::init<>())
      .def_static("from_env", [] { return EngineOptions::from_env(); }, "The settings the environment gives.")
      .def_property(
          "simd", [](const EngineOptions& o) { return std::string(simd_name(o.simd)); },
          [](EngineOptions& o, const std::string& path) {
            for (SimdPath p : salsox::simd_paths())
              if (path == simd_name(p)) {
                o.simd = p;
                return;
              }
            throw std::invalid_argument("simd: '" + path + "' is not a path this CPU (or build) runs");
          })
      .def_readwrite("cell_cache", &EngineOptions::cell_cache)
      .def_readwrite("cell_lanes", &EngineOptions::cell_lanes)
      .def_readwrite("binder_unrolled", &EngineOptions::binder_unrolled)
      .def_readwrite("countsum_jit", &EngineOptions::countsum_jit)
      .def_readwrite("countsum_fused", &EngineOptions::countsum_fused)
      .def_readwrite("countsum_row_widths", &EngineOptions::countsum_row_widths);

  m.def("simd_path", [] { return std::string(simd_name(EngineOptions::from_env().simd)); },
        "The instruction set the omARI and entropy scores use now: SALSOX_SIMD if set (ValueError when\n"
        "the CPU cannot run it), else the widest this CPU supports (baseline or avx2).");
  m.def("simd_paths", [] {
    std::vector<std::string> out;
    for (SimdPath p : salsox::simd_paths()) out.emplace_back(simd_name(p));
    return out;
  }, "The instruction sets this CPU and build can run, narrowest first.");
  m.def("has_openmp", [] {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
  });
}
