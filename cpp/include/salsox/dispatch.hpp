// How a search's runs are spread over threads: the stop control shared by the threads (Ctrl-C,
// progress) and the run dispatcher, used by the SALSO search and by CHIPS, and the engine's
// other parallel loops on that dispatcher.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "threads.hpp"

namespace salsox {

// Thrown inside a run when the search must stop (Ctrl-C); never escapes run_salso.
struct SearchAborted {};

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// How far a search is, as reported to the monitor.
struct Progress {
  std::int64_t runs_done = 0;
  std::int64_t runs_total = 0;
  double best_loss = std::numeric_limits<double>::infinity();  // of the finished runs
  double seconds = 0.0;
};

// Called from the calling thread only (it may touch Python); returns true to stop the search.
using Monitor = std::function<bool(const Progress&)>;

// Shared between the threads of one search: stop flag, the finished-run tally, and the monitor
// poll, which only the calling thread runs (Python delivers signals to it), throughout the search.
class StopControl {
 public:
  StopControl(Monitor monitor, std::int64_t runs_total)
      : monitor_(std::move(monitor)), runs_total_(runs_total) {}
  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  void stop() { stop_.store(true, std::memory_order_relaxed); }
  bool interrupted() const { return interrupted_; }
  // A run finished with this loss (called under the search's record lock).
  void record(double loss) {
    if (loss < best_.load(std::memory_order_relaxed)) best_.store(loss, std::memory_order_relaxed);
    done_.fetch_add(1, std::memory_order_relaxed);
  }
  Progress progress() const {
    Progress p;
    p.runs_done = done_.load(std::memory_order_relaxed);
    p.runs_total = runs_total_;
    p.best_loss = best_.load(std::memory_order_relaxed);
    p.seconds = seconds_since(t0_);
    return p;
  }
  // Cheap (a clock read on the calling thread); call often. Polls the monitor at most every
  // 50 ms, on the calling thread only; throws SearchAborted once the search must stop. The clock,
  // not a count of polls, decides: one poll may be seconds from the next (a slow plugin loss).
  void poll() {
    if (stopped()) throw SearchAborted{};
    if (!monitor_ || std::this_thread::get_id() != caller_) return;
    if (check_monitor()) throw SearchAborted{};
  }
  // The calling thread, idle while other threads finish their runs: polls without throwing.
  void poll_idle() {
    if (!stopped() && monitor_ && std::this_thread::get_id() == caller_) check_monitor();
  }

 private:
  Monitor monitor_;
  std::int64_t runs_total_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> done_{0};
  std::atomic<double> best_{std::numeric_limits<double>::infinity()};
  bool interrupted_ = false;
  const std::thread::id caller_ = std::this_thread::get_id();
  const Clock::time_point t0_ = Clock::now();
  // Written by the calling thread only, on a line of its own (every thread reads stop_).
  alignas(64) Clock::time_point last_ = Clock::now();

  // Calls the monitor if 50 ms have passed since its last call; returns whether to stop.
  bool check_monitor() {
    if (Clock::now() - last_ < std::chrono::milliseconds(50)) return stopped();
    const bool stop_now = monitor_(progress());
    last_ = Clock::now();
    if (stop_now) {
      interrupted_ = true;
      stop();
    }
    return stopped();
  }
};

// Whether the threads of a search help each other (Crew), and threads beyond the runners.
struct Helping {
  bool on = false;
  int extra = 0;
};

// Hands runs 0..n_runs-1 out one at a time to `threads` threads, so that Ctrl-C or a time budget
// stops at once. run_one(r, thread) does run r, false to stop. A SearchAborted ends the thread's
// runs; any other exception stops the search and is rethrown after the parallel region. With
// `helping` on, a thread with no run left helps the others' runs (found through Crew::here()).
template <class RunOne>
void for_each_run(int threads, std::int64_t n_runs, StopControl& control, RunOne&& run_one,
                  Helping helping = {}) {
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<std::int64_t> next_run{0};
  int runners = threads;  // threads 0..runners-1 take runs (set once the team is known)
  Countdown active(threads);
  std::unique_ptr<Crew> crew;
  // Sized by the team the runtime really gave: a thread counted that never comes is waited for forever.
  auto start = [&](int team) {
    runners = std::min(threads, team);
    active.reset(runners);
    if (helping.on && team > 1) crew = std::make_unique<Crew>(team);
  };
  auto work = [&](int thread) {
    const Crew::Seat seat(crew.get(), thread);
    for (;;) {
      if (thread >= runners || control.stopped()) break;
      const std::int64_t r = next_run.fetch_add(1);
      if (r >= n_runs) break;
      try {
        if (!run_one(r, thread)) break;
      } catch (const SearchAborted&) {
        break;
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        control.stop();
        break;
      }
    }
    if (crew) {
      crew->serve(thread, [&] {
        if (thread == 0) control.poll_idle();
      });
      return;
    }
    active.done();
    if (thread == 0) active.wait([&control] { control.poll_idle(); });
  };
  const int total = helping.on ? usable_threads(threads + helping.extra) : threads;
  if (total == 1) {
    start(1);
    work(0);
  } else {
#pragma omp parallel num_threads(total)
    {
      int thread = 0, team = 1;
#ifdef _OPENMP
      thread = omp_get_thread_num();
      team = omp_get_num_threads();
#endif
#pragma omp single
      start(team);
      work(thread);
    }
  }
  if (error) std::rethrow_exception(error);
}

// body(i, thread) for i < count on up to `threads` threads (loop_threads), the items handed out
// one at a time as runs are, until `interrupt` stops it (the calling thread answers it while it
// waits for the others' last items). The first exception stops the loop and is rethrown.
template <class Body>
void parallel_for(int threads, std::int64_t count, Interrupt* interrupt, Body&& body) {
  Monitor check;
  if (interrupt) check = [interrupt](const Progress&) { return interrupt->poll(); };
  StopControl control(std::move(check), count);
  for_each_run(loop_threads(threads, count), count, control, [&](std::int64_t i, int thread) {
    if (interrupt && interrupt->poll()) return false;
    body(i, thread);
    return true;
  });
}

}  // namespace salsox
