// Thread plumbing of the engine's parallel loops: thread counts safe after fork(), interrupts,
// the wait for a loop's last threads, and the crew of a search's threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

// For code kept out of the loops that call it (see Crew::share).
#if defined(__GNUC__) || defined(__clang__)
#define SALSOX_NOINLINE __attribute__((noinline))
#else
#define SALSOX_NOINLINE
#endif

namespace salsox {

// Set in a child forked after the engine ran a parallel region: libgomp's pool does not survive
// fork() (a parallel region there hangs), so the child runs every loop on its own thread.
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

// The CPUs the process may use as Python counts them (the affinity lowered to the cgroup CPU
// quota, salsox/_cpus.py), set before each call; 0 until then.
inline std::atomic<int>& cpus_allowed() {
  static std::atomic<int> cpus{0};
  return cpus;
}

// The CPUs this process may run on (its affinity mask, lowered to cpus_allowed when set): the
// most threads awake at once in the crews (Crew), and in a loop (loop_threads). At least one.
inline int usable_cpus() {
#ifdef _OPENMP
  static const int cpus = std::max(1, omp_get_num_procs());
#else
  static const int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
#endif
  const int allowed = cpus_allowed().load(std::memory_order_relaxed);
  return allowed > 0 ? std::min(cpus, allowed) : cpus;
}

// Threads awake in every crew of the process (searches run at once share the CPUs).
inline std::atomic<int>& crews_awake() {
  static std::atomic<int> awake{0};
  return awake;
}

// Threads for a loop of `count` items on `requested` threads: at most the items and CPUs, at least one.
inline int loop_threads(std::int64_t requested, std::int64_t count) {
  const std::int64_t t = std::min<std::int64_t>({requested, count, static_cast<std::int64_t>(usable_cpus())});
  return usable_threads(static_cast<int>(std::max<std::int64_t>(1, t)));
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

// The threads of a parallel loop still at work. The calling thread waits for them while it
// answers interrupts (every 5 ms at most), and is woken as soon as the last one is done.
class Countdown {
 public:
  explicit Countdown(int left) : left_(left) {}
  void reset(int left) { left_.store(left); }
  void done() {
    if (left_.fetch_sub(1) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);  // a waiter between its check and its wait
      woken_.notify_all();                       // holds the lock: it cannot miss this
    }
  }
  template <class Poll>
  void wait(Poll&& poll) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (left_.load() > 0) {
      lock.unlock();
      poll();
      lock.lock();
      woken_.wait_for(lock, std::chrono::milliseconds(5), [this] { return left_.load() == 0; });
    }
  }

 private:
  std::atomic<int> left_;
  std::mutex mutex_;
  std::condition_variable woken_;
};

// The threads of one search lending themselves to each other: a thread with no run left serves
// the loops that the runs still going share through the crew (share), each posted in its
// poster's slot. Idle threads spin briefly between loops, then sleep; at most as many threads as
// CPUs are awake over every crew (crews_awake): one spinning, or preempted holding a block,
// stalls the runs still going.
// What a loop computes must not depend on how its blocks are spread (the callers' bodies write
// disjoint outputs, reduced afterwards in a fixed order).
class Crew {
 public:
  // A crew of `threads` threads, each of which calls serve once it has no run (left).
  explicit Crew(int threads, int cpus = usable_cpus()) : cpus_(std::max(1, cpus)), running_(threads) {
    for (int t = 0; t < threads; ++t) {
      auto slot = std::make_unique<Slot>();
      // >= the blocks of any loop: share's grain leaves at most 16 per thread.
      slot->capacity = 16 * static_cast<std::int64_t>(threads) + 1;
      slot->taken = std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(slot->capacity));
      slots_.push_back(std::move(slot));
    }
    awake_.store(threads);
    crews_awake().fetch_add(threads);
  }
  ~Crew() { crews_awake().fetch_sub(awake_.load()); }
  Crew(const Crew&) = delete;
  Crew& operator=(const Crew&) = delete;

  // Where the calling thread sits: the crew of the search whose run it is executing, and its
  // slot (set by Seat for the length of the run; {nullptr, -1} elsewhere).
  struct Place {
    Crew* crew = nullptr;
    int slot = -1;
  };
  static Place& here() {
    thread_local Place place;
    return place;
  }
  class Seat {
   public:
    Seat(Crew* crew, int slot) : saved_(here()) { here() = {crew, slot}; }
    ~Seat() { here() = saved_; }
    Seat(const Seat&) = delete;
    Seat& operator=(const Seat&) = delete;

   private:
    Place saved_;
  };

  // f(i) for i in [0, count) shared through the calling thread's crew, if some thread is idle;
  // returns the threads that took part, or 0 (the caller runs the loop). Blocks: >= min_grain.
  template <class F>
  static int share_here(std::int64_t count, const F& f, std::int64_t min_grain = 1) {
    const Place& place = here();
    if (!place.crew || count < 2 * std::max<std::int64_t>(1, min_grain) || !place.crew->has_helpers()) return 0;
    return place.crew->share(
        place.slot, count,
        [&f](std::int64_t lo, std::int64_t hi) {
          F local = f;  // a private copy, as the callers' inline loops use
          for (std::int64_t i = lo; i < hi; ++i) local(i);
        },
        min_grain);
  }

  // Whether some thread is idle and a CPU free for it (relaxed: a hint).
  bool has_helpers() const { return idle_.load(std::memory_order_relaxed) > 0 && helpers_now() > 0; }
  // Threads a loop shared from here may have now: itself and the idle ones a free CPU can run.
  static int team_here() {
    const Place& place = here();
    return place.crew ? 1 + place.crew->helpers_now() : 1;
  }

  // body(lo, hi) over blocks of [0, count) by the calling thread (slot `me`) and whichever idle
  // threads join; returns the threads that ran a block. An exception from a block is rethrown
  // once no thread is inside the loop. Not inlined: it slowed the callers' one-thread path.
  template <class Body>
  SALSOX_NOINLINE int share(int me, std::int64_t count, const Body& body, std::int64_t min_grain = 1) {
    Slot& s = *slots_[static_cast<std::size_t>(me)];
    s.count = count;
    // About eight blocks per thread: helpers that join late still find work.
    const auto threads = static_cast<std::int64_t>(std::min<std::size_t>(slots_.size(), static_cast<std::size_t>(cpus_)));
    s.grain = std::max<std::int64_t>({1, min_grain, count / (8 * threads)});
    s.blocks = (count + s.grain - 1) / s.grain;
    assert(s.blocks <= s.capacity);  // the grain above leaves at most 16 blocks a thread
    s.body = &body;
    s.call = [](const void* b, std::int64_t lo, std::int64_t hi) { (*static_cast<const Body*>(b))(lo, hi); };
    for (std::int64_t b = 0; b < s.blocks; ++b) s.taken[b].store(0, std::memory_order_relaxed);
    s.joined.store(1, std::memory_order_relaxed);
    s.failed.store(false, std::memory_order_relaxed);
    s.error = nullptr;
    s.open.store(true);  // seq_cst, against sleepers_ (see serve)
    // Wake as many sleepers as there are free CPUs and blocks for them (the poster runs the
    // loop in any case: no loop waits for a helper).
    if (sleepers_.load() > 0) {
      const std::int64_t wake = std::min<std::int64_t>(room(), s.blocks - 1);
      if (wake > 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::int64_t k = 0; k < wake; ++k) wake_.notify_one();
      }
    }
    work(s, me);
    // Closed, then no helper is left inside once `users` is 0 (a helper counts itself in
    // before it looks at `open`), and the slot may be reused or the body destroyed.
    s.open.store(false);
    while (s.users.load() != 0) std::this_thread::yield();
    if (s.error) std::rethrow_exception(s.error);
    return s.joined.load(std::memory_order_relaxed);
  }

  // The calling thread (slot `me`) has no run left: helps the others' loops until no thread
  // has a run left, calling `idle_poll` every few milliseconds.
  template <class Poll>
  void serve(int me, Poll&& idle_poll) {
    idle_.fetch_add(1);
    if (running_.fetch_sub(1) == 1) wake_all();  // the last run ended: release the helpers
    using Clock = std::chrono::steady_clock;
    auto last_work = Clock::now(), last_poll = last_work;
    std::uint32_t spins = 0;
    for (;;) {
      bool worked = false;
      const bool crowded = room() < 0;  // more threads awake than CPUs: this one sleeps
      if (!crowded)
        for (std::size_t k = 0; k < slots_.size(); ++k)
          if (static_cast<int>(k) != me && slots_[k]->open.load(std::memory_order_relaxed)) worked |= help(*slots_[k], me);
      if (!worked && running_.load() == 0) break;
      if (!worked && !crowded && ++spins % 64 != 0) {
        pause();
        continue;
      }
      spins = 0;
      const auto now = Clock::now();
      if (now - last_poll >= kPoll) {
        idle_poll();
        last_poll = now;
      }
      if (worked) {
        last_work = now;
        continue;
      }
      if (now - last_work < kSpin && !crowded) continue;
      // Nothing to do for a while (or no CPU free): sleep until woken. The calling thread wakes
      // every kPoll to poll (Ctrl-C, progress), the others after kNap, should a wake-up be missed.
      bool woken = true;
      sleepers_.fetch_add(1);  // seq_cst, against open (see share)
      asleep(true);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if ((crowded || !any_open(me)) && running_.load() != 0)
          woken = wake_.wait_for(lock, me == 0 ? kPoll : kNap) == std::cv_status::no_timeout;
      }
      asleep(false);
      sleepers_.fetch_sub(1);
      // Woken by a loop: the run that posted it posts the next soon, spin for it again.
      if (woken) last_work = Clock::now();
    }
    idle_.fetch_sub(1);
    asleep(true);  // done with this crew: its CPU is free for the others
  }

 private:
  void asleep(bool yes) {
    awake_.fetch_add(yes ? -1 : 1, std::memory_order_relaxed);
    crews_awake().fetch_add(yes ? -1 : 1, std::memory_order_relaxed);
  }

  // How long an idle thread spins for the next loop before it sleeps, how often it polls.
  static constexpr std::chrono::microseconds kSpin{200};
  static constexpr std::chrono::milliseconds kPoll{5};
  static constexpr std::chrono::milliseconds kNap{100};

  // CPUs free now, less the threads awake in every crew (negative when crowded). A hint.
  int room() const { return cpus_ - crews_awake().load(std::memory_order_relaxed); }
  // Idle threads a loop posted now could have: those awake, and sleepers a free CPU could run.
  int helpers_now() const {
    const int idle = idle_.load(std::memory_order_relaxed);
    const int asleep = sleepers_.load(std::memory_order_relaxed);
    return std::max(0, std::min(idle, idle - asleep + std::max(0, room())));
  }

  struct alignas(64) Slot {
    std::atomic<bool> open{false};
    std::atomic<int> users{0};  // helpers inside (or about to look at) this loop
    std::atomic<int> joined{1};
    std::atomic<bool> failed{false};
    std::int64_t count = 0, grain = 1, blocks = 0, capacity = 0;
    // Per block, whether a thread has taken it (see work).
    std::unique_ptr<std::atomic<std::uint8_t>[]> taken;
    const void* body = nullptr;
    void (*call)(const void*, std::int64_t, std::int64_t) = nullptr;
    std::exception_ptr error;
    std::mutex error_mutex;
  };

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

  // Takes blocks of the loop in `s` until none is left, as thread `who`: from its own place in
  // the loop, who / threads of the way in, wrapping round, so that pass after pass each thread
  // keeps mostly the same draws and their rows stay in its core's cache.
  void work(Slot& s, int who) {
    const bool helper = &s != slots_[static_cast<std::size_t>(who)].get();
    bool counted = !helper;
    const std::int64_t blocks = s.blocks;
    const std::int64_t home = static_cast<std::int64_t>(who) * blocks / static_cast<std::int64_t>(slots_.size());
    for (std::int64_t j = 0, b = home; j < blocks; ++j, b = b + 1 == blocks ? 0 : b + 1) {
      if (s.failed.load(std::memory_order_relaxed)) break;
      if (s.taken[b].load(std::memory_order_relaxed) != 0 || s.taken[b].exchange(1) != 0) continue;
      const std::int64_t lo = b * s.grain;
      if (!counted) {
        s.joined.fetch_add(1, std::memory_order_relaxed);
        counted = true;
      }
      try {
        s.call(s.body, lo, std::min(s.count, lo + s.grain));
      } catch (...) {
        std::lock_guard<std::mutex> lock(s.error_mutex);
        if (!s.error) s.error = std::current_exception();
        s.failed.store(true);
      }
    }
  }

  // Joins the loop in `s` if it is still open, as thread `me`; returns whether it was.
  bool help(Slot& s, int me) {
    s.users.fetch_add(1);  // seq_cst, before looking at open (see share)
    const bool open = s.open.load();
    if (open) work(s, me);
    s.users.fetch_sub(1);
    return open;
  }

  bool any_open(int me) const {
    for (std::size_t k = 0; k < slots_.size(); ++k)
      if (static_cast<int>(k) != me && slots_[k]->open.load()) return true;
    return false;
  }

  void wake_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }

  std::vector<std::unique_ptr<Slot>> slots_;
  const int cpus_;
  std::atomic<int> awake_{0};  // this crew's share of crews_awake
  std::atomic<int> running_;  // threads not yet serving: they may still share loops
  std::atomic<int> idle_{0};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

// The passes of one search run over its draws: on the run's threads or shared with the search's
// idle threads (Crew), the same result either way. Bodies capture plain values ([=]): run on a
// private copy, their pointers stay in registers though every char-sized count store may alias.
class DrawThreads {
 public:
  void set_threads(int threads) { threads_ = threads > 0 ? threads : 1; }
  // The most threads a pass had since reset.
  int threads_used() const { return team_max_; }
  void reset() { team_max_ = 1; }

  // f(i) for i in [0, count), a pass over `draws` draws (see Crew::share_here).
  template <class F>
  int run(std::int64_t draws, std::int64_t count, const F& f, std::int64_t min_grain = 1) const {
    if (const int joined = draws >= kShareDraws ? Crew::share_here(count, f, min_grain) : 0) {
      team_max_ = std::max(team_max_, joined);
      return joined;
    }
#ifdef _OPENMP
    if (threads_ > 1) {
      int team = 1;
#pragma omp parallel num_threads(threads_)
      {
        if (omp_get_thread_num() == 0) team = omp_get_num_threads();
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < count; ++i) f(i);
      }
      // A static schedule leaves threads past the count without an iteration.
      team = static_cast<int>(std::min<std::int64_t>(team, count));
      team_max_ = std::max(team_max_, team);
      return team;
    }
#endif
    F local = f;
    for (std::int64_t i = 0; i < count; ++i) local(i);
    return 1;
  }

  // Threads a pass over `draws` draws may run on now (a hint: results never depend on it).
  int shared_threads(std::int64_t draws) const {
    return draws >= kShareDraws ? std::max(threads_, Crew::team_here()) : 1;
  }

  // Passes over fewer draws take less time than handing blocks to another core: not shared.
  static constexpr std::int64_t kShareDraws = 1024;

 private:
  int threads_ = 1;
  mutable int team_max_ = 1;
};

}  // namespace salsox
