// Bindings of the WASABI kernel (salsox/particle_vi.hpp): the draw-to-particle VI matrix, with
// the GIL released and Ctrl-C (or a caller's stop callable) honoured. Validation with friendly
// messages happens in salsox/uncertainty/wasabi/; checks here only guard memory safety.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>

#include "salsox/draws.hpp"
#include "common.hpp"
#include "engine_calls.hpp"

namespace py = pybind11;
using namespace salsox;
using namespace salsox::bindings;

void register_wasabi(py::module_& m) {
  m.def(
      "particle_vi",
      [](const CompactDraws& draws, const CArray<std::int32_t>& particles, int n_jobs, py::object stop) {
        check_estimates(particles, draws.n(), "particles");
        const std::int64_t L = particles.shape(0);
        if (L < 1) throw std::invalid_argument("particles must have at least one row");
        py::array_t<double> out({static_cast<py::ssize_t>(draws.H()), static_cast<py::ssize_t>(L)});
        double* o = out.mutable_data();
        const std::int32_t* p = particles.data();
        without_gil([&](Interrupt* interrupt) { particle_vi(draws, p, L, o, n_jobs, interrupt); }, std::move(stop));
        return out;
      },
      py::arg("draws"), py::arg("particles"), py::arg("n_jobs") = 1, py::arg("stop") = py::none(),
      "H x L matrix of the VI (bits) of each draw to each particle, O(H n) per particle. `stop`, if "
      "given, is called about every 50 ms on the calling thread; an exception from it stops the call.");
}
