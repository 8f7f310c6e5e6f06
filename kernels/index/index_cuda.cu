// index on the device. mask: CUB's DeviceSelect::Flagged keeps the positions of true mask
// elements in order, then rows are gathered; select and pairs: gathers whose indices are checked
// on the device, the first bad one (lowest position) reported back as the same parity::Error the
// reference throws. Rows move as unsigned integers of the dtype's size (bit-exact).
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/cuda_util.h"
#include "kernels/index/index.h"

namespace parity {

namespace {
constexpr int kThreads = 256;

// Python's rule, as the reference: -size <= i < size. A bad index records its position (the
// smallest wins) in *bad, which starts at INT64_MAX.
__device__ bool wrap_index(int64_t i, int64_t size, int64_t pos, int64_t* bad, int64_t& out) {
  if (i < -size || i >= size) {
    atomicMin(reinterpret_cast<unsigned long long*>(bad), static_cast<unsigned long long>(pos));
    return false;
  }
  out = i < 0 ? i + size : i;
  return true;
}

// out[r, :] = x[rows[r], :] for rows given directly (mask) as [row_len]-element rows.
template <typename T>
__global__ void gather_rows_kernel(const T* __restrict__ x, const int64_t* __restrict__ rows, const int64_t* __restrict__ count,
                                   int64_t row_len, T* __restrict__ out) {
  const int64_t total = *count * row_len;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = o / row_len;
    out[o] = x[rows[r] * row_len + (o - r * row_len)];
  }
}

// Select along dim: x viewed as [outer, size, inner], out as [outer, n, inner].
template <typename T>
__global__ void select_kernel(const T* __restrict__ x, const int64_t* __restrict__ idx, int64_t outer, int64_t size, int64_t inner,
                              int64_t n, T* __restrict__ out, int64_t* bad) {
  const int64_t total = outer * n * inner;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t in = o % inner, rest = o / inner, k = rest % n, ou = rest / n;
    int64_t row = 0;
    if (wrap_index(idx[k], size, k, bad, row)) out[o] = x[(ou * size + row) * inner + in];
  }
}

// Pairs: out[k, :] = x[i[k], j[k], :] with x viewed as [rows, cols, row_len].
template <typename T>
__global__ void pairs_kernel(const T* __restrict__ x, const int64_t* __restrict__ iv, const int64_t* __restrict__ jv, int64_t rows,
                             int64_t cols, int64_t row_len, int64_t n, T* __restrict__ out, int64_t* bad_i, int64_t* bad_j) {
  const int64_t total = n * row_len;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = o / row_len;
    int64_t r = 0, c = 0;
    const bool ok_i = wrap_index(iv[k], rows, k, bad_i, r);
    const bool ok_j = wrap_index(jv[k], cols, k, bad_j, c);
    if (ok_i && ok_j) out[o] = x[(r * cols + c) * row_len + (o - k * row_len)];
  }
}

// Runs `launch.template operator()<T>()` with T the unsigned integer of the dtype's size.
template <typename Launch> void by_item_size(DType dt, Launch&& launch) {
  switch (dtype_size(dt)) {
    case 1: launch(uint8_t{}); break;
    case 2: launch(uint16_t{}); break;
    case 4: launch(uint32_t{}); break;
    case 8: launch(uint64_t{}); break;
    default: throw Error("cuda index: unsupported element size");
  }
}

// The reference's message for the first out-of-range index, if any.
void throw_if_bad(const cuda::DeviceBuffer& bad, const Tensor& indices, const char* name, int64_t size) {
  const int64_t pos = cuda::read_scalar(bad.as<int64_t>());
  if (pos == INT64_MAX) return;
  throw Error("index: " + std::string(name) + "[" + std::to_string(pos) + "] = " + std::to_string(indices.data<int64_t>()[pos]) +
              " is out of range for a dimension of size " + std::to_string(size));
}

cuda::DeviceBuffer bad_flag() {
  cuda::DeviceBuffer b(sizeof(int64_t));
  const int64_t none = INT64_MAX;
  PARITY_CUDA_CHECK(cudaMemcpy(b.data(), &none, sizeof none, cudaMemcpyHostToDevice));
  return b;
}
}  // namespace

Tensor index_cuda(const IndexParams& p, const std::vector<Tensor>& in) {
  check_inputs(IndexParams::kName, p.inputs(), in);
  cuda::require_gpu(IndexParams::kName);
  const Tensor& x = in[0];
  // An empty select or pairs output has no element for a kernel to write, yet its indices must
  // still be checked: the reference does exactly that on the host.
  if (p.mode != IndexParams::Mode::Mask && p.output_shape().numel() == 0) return index_ref(p, in);
  const cuda::DeviceBuffer dx = cuda::to_device(x);
  switch (p.mode) {
    case IndexParams::Mode::Mask: {
      const int64_t rows = in[1].numel(), row_len = rows ? x.numel() / rows : 0;
      const cuda::DeviceBuffer dm = cuda::to_device(in[1]);
      cuda::DeviceBuffer kept(size_t(rows) * sizeof(int64_t)), count(sizeof(int64_t));
      PARITY_CUDA_CHECK(cudaMemset(count.data(), 0, sizeof(int64_t)));
      if (rows > 0) {
        const thrust::counting_iterator<int64_t> first(0);
        const auto* flags = dm.as<bool>();
        size_t temp_bytes = 0;
        PARITY_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, first, flags, kept.as<int64_t>(), count.as<int64_t>(), rows));
        cuda::DeviceBuffer temp(temp_bytes);
        cuda::kernel_begin();
        PARITY_CUDA_CHECK(
            cub::DeviceSelect::Flagged(temp.data(), temp_bytes, first, flags, kept.as<int64_t>(), count.as<int64_t>(), rows));
        cuda::check_launch("cub::DeviceSelect::Flagged (index mask)");
      }
      kept.check_guards("cuda index (mask positions)");
      const int64_t n = cuda::read_scalar(count.as<int64_t>());
      const Shape os = p.output_shape(n);
      cuda::DeviceBuffer out = cuda::output_buffer(p.dtype, os);
      if (n * row_len > 0) {
        by_item_size(p.dtype, [&](auto tag) {
          using T = decltype(tag);
          cuda::kernel_begin();
          gather_rows_kernel<<<cuda::blocks_for(n * row_len, kThreads), kThreads>>>(dx.as<T>(), kept.as<int64_t>(), count.as<int64_t>(),
                                                                                    row_len, out.as<T>());
        });
        cuda::check_launch("gather_rows_kernel (index mask)");
      }
      return cuda::to_host(out, p.dtype, os, "cuda index");
    }
    case IndexParams::Mode::Select: {
      const auto d = size_t(p.resolved_dim());
      int64_t outer = 1, inner = 1;
      for (size_t i = 0; i < d; ++i) outer *= p.x[i];
      for (size_t i = d + 1; i < p.x.rank(); ++i) inner *= p.x[i];
      const Shape os = p.output_shape();
      const cuda::DeviceBuffer didx = cuda::to_device(in[1]);
      cuda::DeviceBuffer out = cuda::output_buffer(p.dtype, os);
      cuda::DeviceBuffer bad = bad_flag();
      if (os.numel() > 0) {
        by_item_size(p.dtype, [&](auto tag) {
          using T = decltype(tag);
          cuda::kernel_begin();
          select_kernel<<<cuda::blocks_for(os.numel(), kThreads), kThreads>>>(dx.as<T>(), didx.as<int64_t>(), outer, p.x[d], inner, p.n,
                                                                              out.as<T>(), bad.as<int64_t>());
        });
        cuda::check_launch("select_kernel (index select)");
      }
      throw_if_bad(bad, in[1], "idx", p.x[d]);
      return cuda::to_host(out, p.dtype, os, "cuda index");
    }
    case IndexParams::Mode::Pairs: {
      // row_len from the trailing dimensions, not x.numel() / (rows * cols): with rows or cols 0 the
      // kernel must still run and report every index as out of range, as the reference does.
      const int64_t rows = p.x[0], cols = p.x[1];
      int64_t row_len = 1;
      for (size_t i = 2; i < p.x.rank(); ++i) row_len *= p.x[i];
      const Shape os = p.output_shape();
      const cuda::DeviceBuffer di = cuda::to_device(in[1]), dj = cuda::to_device(in[2]);
      cuda::DeviceBuffer out = cuda::output_buffer(p.dtype, os);
      cuda::DeviceBuffer bad_i = bad_flag(), bad_j = bad_flag();
      if (os.numel() > 0) {
        by_item_size(p.dtype, [&](auto tag) {
          using T = decltype(tag);
          cuda::kernel_begin();
          pairs_kernel<<<cuda::blocks_for(os.numel(), kThreads), kThreads>>>(dx.as<T>(), di.as<int64_t>(), dj.as<int64_t>(), rows, cols,
                                                                             row_len, p.n, out.as<T>(), bad_i.as<int64_t>(),
                                                                             bad_j.as<int64_t>());
        });
        cuda::check_launch("pairs_kernel (index pairs)");
      }
      // The reference stops at the first k whose i or j is bad, checking i before j.
      const int64_t pi = cuda::read_scalar(bad_i.as<int64_t>()), pj = cuda::read_scalar(bad_j.as<int64_t>());
      if (pi != INT64_MAX && pi <= pj) throw_if_bad(bad_i, in[1], "i", rows);
      if (pj != INT64_MAX) throw_if_bad(bad_j, in[2], "j", cols);
      return cuda::to_host(out, p.dtype, os, "cuda index");
    }
  }
  throw Error("cuda index: unknown mode");
}

}  // namespace parity
