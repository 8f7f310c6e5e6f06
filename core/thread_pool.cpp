#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace parity {

namespace {

thread_local bool t_inside_chunk = false;

struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, grain, chunks;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;

  // Takes chunks until none are left; returns when this thread has no more to do.
  void work() {
    t_inside_chunk = true;
    for (int64_t c; (c = next.fetch_add(1)) < chunks;) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        (*fn)(c * grain, std::min(n, (c + 1) * grain));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
    t_inside_chunk = false;
  }
};

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { loop(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(Job& job) {
    std::unique_lock<std::mutex> lock(mutex_);
    // One job at a time: a second caller waits for the pool rather than sharing it.
    idle_.wait(lock, [this] { return job_ == nullptr; });
    job_ = &job;
    busy_ = 0;
    ++generation_;
    lock.unlock();
    wake_.notify_all();

    job.work();

    lock.lock();
    // Wait until no worker is still inside this job before it goes out of scope.
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
    lock.unlock();
    idle_.notify_one();
  }

 private:
  void loop() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || (job_ && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      Job* job = job_;
      ++busy_;
      lock.unlock();
      job->work();
      lock.lock();
      if (--busy_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_, idle_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  int busy_ = 0;
  bool stop_ = false;
};

int default_threads() {
  if (const char* env = std::getenv("PARITY_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::mutex g_pool_mutex;
std::unique_ptr<Pool> g_pool;

Pool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_unique<Pool>(default_threads());
  return *g_pool;
}

}  // namespace

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  Job job;
  job.fn = &fn;
  job.n = n;
  job.grain = grain;
  job.chunks = chunk_count(n, grain);
  if (job.chunks == 1 || t_inside_chunk || num_threads() == 1) {
    const bool outer = t_inside_chunk;
    job.work();
    t_inside_chunk = outer;
  } else {
    pool().run(job);
  }
  if (job.error) std::rethrow_exception(job.error);
}

int num_threads() { return pool().threads(); }

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_pool = std::make_unique<Pool>(std::max(1, n));
}

}  // namespace parity
