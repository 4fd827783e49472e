// The Python calls of one search's plugin loss, on every thread: the stop flag they share, and
// which threads are inside a call now. Stopping raises KeyboardInterrupt asynchronously in each
// of those threads (PyThreadState_SetAsyncExc): a pure-Python loss running on a worker thread
// stops at its next bytecode instead of finishing its call, since Python delivers signals to the
// calling thread only. A call blocked in C (time.sleep, one long numpy operation) ends first.
#pragma once
#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace salsox::bindings {

class PluginCalls {
 public:
  // Set once the search must stop (Ctrl-C seen by its monitor, an exception from a call).
  bool stopped() const { return stopped_.load(); }

  // With the GIL held: stops the search, and interrupts every other thread's call in flight.
  void stop() {
    stopped_.store(true);
    const unsigned long me = PyThread_get_thread_ident();
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& call : in_flight_) {
      if (call.thread == me || call.interrupted) continue;
      PyThreadState_SetAsyncExc(call.thread, PyExc_KeyboardInterrupt);
      call.interrupted = true;
    }
  }

  // One thread's call, from before the plugin runs until its result is read (GIL held at both
  // ends). An interruption is only ever sent inside this span; end() withdraws one not yet
  // raised, so that no later Python code of the thread receives it.
  class Call {
   public:
    explicit Call(PluginCalls& calls) : calls_(calls), thread_(PyThread_get_thread_ident()) {
      std::lock_guard<std::mutex> lock(calls_.mutex_);
      calls_.in_flight_.push_back({thread_, false});
    }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call() { end(); }

    // Leaves the span (GIL held); true when stop() interrupted this call.
    bool end() {
      if (ended_) return interrupted_;
      ended_ = true;
      std::lock_guard<std::mutex> lock(calls_.mutex_);
      auto& v = calls_.in_flight_;
      const auto it = std::find_if(v.begin(), v.end(), [&](const InFlight& c) { return c.thread == thread_; });
      interrupted_ = it->interrupted;
      v.erase(it);
      if (interrupted_) PyThreadState_SetAsyncExc(thread_, nullptr);
      return interrupted_;
    }

   private:
    PluginCalls& calls_;
    const unsigned long thread_;
    bool ended_ = false;
    bool interrupted_ = false;
  };

 private:
  struct InFlight {
    unsigned long thread;
    bool interrupted;
  };
  std::atomic<bool> stopped_{false};
  std::mutex mutex_;
  std::vector<InFlight> in_flight_;
};

}  // namespace salsox::bindings
