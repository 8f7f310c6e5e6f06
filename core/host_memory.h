#pragma once
// Host memory for tensors. Every new page costs a fault, and on a virtual machine a fault is
// slow: zero-filling a fresh 100 MiB tensor ran at 0.4 GB/s on the 2-core development VM,
// against 9 GB/s on memory already faulted in. So buffers of at least kHugeBuffer bytes are
// 2 MiB-aligned with transparent huge pages asked for (one fault per 2 MiB where the kernel
// grants them), and a freed one is kept for reuse while the kept ones stay under kKeptBytes:
// a compare or a model run allocates tensors of the same few sizes layer after layer.
#include <cstddef>
#include <memory>

namespace parity {

inline constexpr size_t kHugeBuffer = size_t(2) << 20;
// The most bytes of freed buffers kept for reuse; beyond it they go back to the system, so the
// resident set stays bounded by the tensors in use plus this.
inline constexpr size_t kKeptBytes = size_t(512) << 20;

// `nbytes` bytes (at least 1), 64-byte aligned, not initialised; freed (or kept) when the last
// owner lets go. Thread-safe.
std::shared_ptr<std::byte> host_buffer(size_t nbytes);

// Bytes held in kept buffers now.
size_t kept_host_bytes();

// Whether the kernel grants transparent huge pages to a buffer that asks (its mode is "always"
// or "madvise"). Without them a fresh buffer faults in 4 KiB at a time, slower than mapping a
// file in the page cache, which faults in 64 KiB at a time.
bool huge_pages_on_request();

}  // namespace parity
