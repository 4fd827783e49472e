// Bindings of the WASABI kernel (salsox/particle_vi.hpp): the draw-to-particle VI matrix, with
// the GIL released and Ctrl-C (or a caller's stop callable) honoured. Validation with friendly
// messages happens in salsox/uncertainty/wasabi/; checks here only guard memory safety.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <stdexcept>

#include "salsox/draws.hpp"
#include "common.hpp"
#include "engine_calls.hpp"

namespace py = pybind11;
using namespace salsox;
using namespace salsox::bindings;

namespace {

// Whether the call must stop: Ctrl-C, or `stop` (None or a callable, called with the GIL) raising,
// whose exception is kept in `error`. A WASABI start runs on a worker thread, where Python runs
// no signal handler: its stop flag reaches the engine only through `stop`.
bool stop_requested(const py::object& stop, std::exception_ptr& error) {
  if (python_signalled(error)) return true;
  if (stop.is_none()) return false;
  py::gil_scoped_acquire acquire;
  try {
    stop();
  } catch (...) {
    error = std::current_exception();
    return true;
  }
  return false;
}

py::array_t<double> particle_vi_matrix(const CompactDraws& draws, const CArray<std::int32_t>& particles, int n_jobs,
                                       const py::object& stop) {
  const std::int64_t n = draws.n(), H = draws.H();
  if (particles.ndim() != 2 || particles.shape(1) != n) throw std::invalid_argument("particles must be L x n");
  const std::int64_t L = particles.shape(0);
  if (L < 1) throw std::invalid_argument("particles must have at least one row");
  py::array_t<double> out({static_cast<py::ssize_t>(H), static_cast<py::ssize_t>(L)});
  double* o = out.mutable_data();
  const std::int32_t* p = particles.data();
  std::exception_ptr error;
  Interrupt interrupt([&] { return stop_requested(stop, error); });
  {
    py::gil_scoped_release release;
    particle_vi(draws, p, L, o, n_jobs, &interrupt);
  }
  if (error) std::rethrow_exception(error);
  if (interrupt.stopped()) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return out;
}

}  // namespace

void register_wasabi(py::module_& m) {
  m.def("particle_vi", &particle_vi_matrix, py::arg("draws"), py::arg("particles"), py::arg("n_jobs") = 1,
        py::arg("stop") = py::none(),
        "H x L matrix of the VI (bits) of each draw to each particle, O(H n) per particle. `stop`, if "
        "given, is called about every 50 ms on the calling thread; an exception from it stops the call.");
}
