// Splitting a loop over the machine's cores: the planner's searches evaluate up to millions of
// independent layouts. Each chunk writes only its own slots of the caller's arrays, so no locks
// are needed and the result does not depend on the number of threads.
#ifndef STRATA_CORE_PARALLEL_H_
#define STRATA_CORE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace strata {

/// The threads a search uses when asked for 0 ("the machine's"): the hardware's count, at most 16.
inline unsigned DefaultThreads() {
  return std::clamp(std::thread::hardware_concurrency(), 1U, 16U);
}

/// ParallelChunks with each chunk's number passed first (0 to threads - 1; 0 runs on the
/// calling thread): for scratch state kept per thread.
template <class Fn>
void ParallelNumberedChunks(size_t n, unsigned threads, size_t min_per_thread, Fn fn) {
  const size_t useful = min_per_thread == 0 ? n : n / min_per_thread;
  const size_t t = std::max<size_t>(1, std::min<size_t>(threads, useful));
  if (t <= 1) {
    fn(size_t{0}, size_t{0}, n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(t - 1);
  const size_t per = (n + t - 1) / t;
  for (size_t i = 1; i < t; ++i) {
    const size_t begin = std::min(n, i * per), end = std::min(n, begin + per);
    workers.emplace_back([&fn, i, begin, end] { fn(i, begin, end); });
  }
  fn(size_t{0}, size_t{0}, std::min(n, per));
  for (std::thread& w : workers) w.join();
}

/// Calls `fn(begin, end)` on contiguous chunks covering [0, n): one chunk per thread, the first
/// on the calling thread, the others on threads joined before returning. Fewer than
/// `min_per_thread` items per thread run on the calling thread alone (a thread costs tens of
/// microseconds to start). `fn` must not throw and must touch only its own chunk's outputs.
template <class Fn>
void ParallelChunks(size_t n, unsigned threads, size_t min_per_thread, Fn fn) {
  ParallelNumberedChunks(n, threads, min_per_thread,
                         [&fn](size_t /*chunk*/, size_t begin, size_t end) { fn(begin, end); });
}

/// Runs `worker(take)` on up to `threads` threads (the first on the calling thread), where
/// `take(begin, end)` hands out the next `grain` items of [0, n) and returns false once none is
/// left: for items of uneven cost (a thread that finishes its items early takes more, where
/// ParallelChunks would leave it idle). Which thread handles which item varies from run to run:
/// `worker` must make its results independent of that (each item's output in its own slot).
template <class Worker>
void ParallelTake(size_t n, unsigned threads, size_t grain, Worker worker) {
  grain = std::max<size_t>(1, grain);
  std::atomic<size_t> next{0};
  auto take = [&](size_t& begin, size_t& end) {
    begin = next.fetch_add(grain, std::memory_order_relaxed);
    if (begin >= n) return false;
    end = std::min(n, begin + grain);
    return true;
  };
  const size_t t = std::max<size_t>(1, std::min<size_t>(threads, (n + grain - 1) / grain));
  std::vector<std::thread> workers;
  workers.reserve(t - 1);
  for (size_t i = 1; i < t; ++i) workers.emplace_back([&worker, &take] { worker(take); });
  worker(take);
  for (std::thread& w : workers) w.join();
}

}  // namespace strata

#endif  // STRATA_CORE_PARALLEL_H_
