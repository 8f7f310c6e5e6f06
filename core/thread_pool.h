#pragma once
// Data-parallel loops over a process-wide pool of worker threads.
//
// parallel_for splits [0, n) into chunks of `grain` elements. Chunk boundaries depend only on n
// and grain, never on the thread count, so a caller that keeps one partial result per chunk and
// combines them in chunk order gets bit-identical results on 1 or 64 threads.
#include <cstdint>
#include <functional>

namespace parity {

// fn(begin, end) is called once per chunk, from the caller and the workers. The first exception
// thrown by any chunk is rethrown in the caller after all running chunks finish; chunks not yet
// started are skipped. A parallel_for called from inside a chunk runs serially.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

inline int64_t chunk_count(int64_t n, int64_t grain) { return n <= 0 ? 0 : (n + grain - 1) / grain; }

// Threads used, the caller included. Default: PARITY_NUM_THREADS when set, else the hardware's.
int num_threads();
void set_num_threads(int n);

}  // namespace parity
