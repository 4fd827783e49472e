// Thread plumbing shared by the engine's parallel loops: a thread count that is safe after
// fork(), an interrupt flag that only the calling thread polls (it may touch the Python
// interpreter), and a parallel loop that keeps exceptions inside the parallel region.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace salsox {

// Set in a child process forked after the engine ran a parallel region: libgomp's thread pool
// does not survive fork(), and entering a parallel region there hangs, so the child runs every
// loop on its own thread (no parallel region at all).
inline std::atomic<bool> g_forked_child{false};
// Whether this process has entered a parallel region with more than one thread.
inline std::atomic<bool> g_threads_started{false};

// The fork child handler (see pthread_atfork in the bindings).
inline void note_fork_child() {
  if (g_threads_started.load()) g_forked_child.store(true);
}

// Threads to use for `requested` (>= 1): one in a forked child; records that threads started.
inline int usable_threads(int requested) {
  if (requested <= 1 || g_forked_child.load(std::memory_order_relaxed)) return 1;
  g_threads_started.store(true, std::memory_order_relaxed);
  return requested;
}

// A stop request for a long engine call. `check` (e.g. Python's signal check) runs only on the
// thread that created the Interrupt, at most every 50 ms; the other threads only read the flag.
// A default-constructed Interrupt never stops.
class Interrupt {
 public:
  using Check = std::function<bool()>;
  Interrupt() = default;
  explicit Interrupt(Check check) : check_(std::move(check)) {}
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  bool stopped() const { return stop_.load(std::memory_order_relaxed); }
  void stop() { stop_.store(true, std::memory_order_relaxed); }

  // Cheap from any thread; returns whether the call must stop.
  bool poll() {
    if (stopped()) return true;
    if (!check_ || std::this_thread::get_id() != caller_) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(50)) return false;
    last_ = now;
    if (check_()) stop();
    return stopped();
  }

 private:
  Check check_;
  std::atomic<bool> stop_{false};
  const std::thread::id caller_ = std::this_thread::get_id();
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// body(i, thread) for i = 0..count-1 over up to `threads` threads (dynamic schedule; thread is
// 0..threads-1, for per-thread scratch). Stops handing out work when `interrupt` says so; the
// calling thread keeps polling it until every thread is done. The first exception thrown by a
// body stops the loop and is rethrown here, after the parallel region (an exception must not
// leave an OpenMP region: that terminates the process). Returns the threads used.
template <class Body>
int parallel_for(int threads, std::int64_t count, Interrupt* interrupt, Body&& body) {
  threads = usable_threads(static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count))));
  std::atomic<std::int64_t> next{0};
  std::atomic<int> active{threads};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](int t) {
    for (;;) {
      if (failed.load(std::memory_order_relaxed) || (interrupt && interrupt->poll())) break;
      const std::int64_t i = next.fetch_add(1);
      if (i >= count) break;
      try {
        body(i, t);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true);
        break;
      }
    }
    active.fetch_sub(1);
    // The calling thread answers interrupts until the others finish their last item.
    if (t == 0 && interrupt)
      while (active.load() > 0) {
        interrupt->poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
  };
  if (threads == 1) {
    work(0);
  } else {
#pragma omp parallel num_threads(threads)
    {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      work(t);
    }
  }
  if (error) std::rethrow_exception(error);
  return threads;
}

}  // namespace salsox
