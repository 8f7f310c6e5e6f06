// nms on the device, torchvision's CUDA scheme: sort by score, then one 64x64 block of IoU tests
// per (row block, column block) pair writes a 64-bit mask of the later boxes each box
// suppresses; a greedy pass over the masks keeps the boxes. Equal to the reference:
//   order  CUB's radix sort (stable) on the scores, descending, so equal scores keep index
//          order, on keys normalised as the reference's comparison sees them (cuda_sort_key.cuh);
//   IoU    nms_iou (nms.h), the reference's float32 formula, compiled without contraction
//          (--fmad=false), compared with the threshold in float64 as the reference does;
//   offset the batched class shift in float32, product then sums, as nms_offset_boxes.
// The greedy pass runs on the host over the copied masks, as torchvision's does: it is serial,
// and reading the masks is cheaper than a one-block device loop for YOLOv5's candidate counts.
#include <cub/device/device_radix_sort.cuh>

#include <cstring>

#include "kernels/cuda_sort_key.cuh"
#include "core/gpu.h"
#include "kernels/cuda_util.h"
#include "kernels/nms/nms.h"

namespace parity {

namespace {
constexpr int kBlock = 64;

__global__ void prepare_kernel(const float* __restrict__ boxes, const float* __restrict__ scores, const float* __restrict__ classes,
                               float max_wh, int64_t n, float* __restrict__ keys, int64_t* __restrict__ index,
                               float* __restrict__ shifted) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    keys[i] = cuda::sort_key(scores[i]);
    index[i] = i;
    const float shift = classes ? classes[i] * max_wh : 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) shifted[i * 4 + k] = classes ? boxes[i * 4 + k] + shift : boxes[i * 4 + k];
  }
}

// Boxes in visiting order, and their areas.
__global__ void gather_kernel(const float* __restrict__ shifted, const int64_t* __restrict__ order, int64_t n, float* __restrict__ sorted,
                              float* __restrict__ area) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += int64_t(gridDim.x) * blockDim.x) {
#pragma unroll
    for (int k = 0; k < 4; ++k) sorted[r * 4 + k] = shifted[order[r] * 4 + k];
    area[r] = nms_area(sorted, r);
  }
}

// Bit t of mask[r * col_blocks + cb] is set when box r suppresses box c = cb*64 + t (c > r).
__global__ void mask_kernel(const float* __restrict__ sorted, const float* __restrict__ area, int64_t n, double threshold,
                            int64_t col_blocks, unsigned long long* __restrict__ mask) {
  const int64_t rb = blockIdx.y, cb = blockIdx.x;
  if (cb < rb) return;  // the greedy pass never reads blocks left of the diagonal
  __shared__ float cols[kBlock * 4];
  __shared__ float col_area[kBlock];
  const int t = threadIdx.x;
  const int64_t c0 = cb * kBlock, r = rb * kBlock + t;
  const int cols_here = int(n - c0 < kBlock ? n - c0 : kBlock);
  if (t < cols_here) {
#pragma unroll
    for (int k = 0; k < 4; ++k) cols[t * 4 + k] = sorted[(c0 + t) * 4 + k];
    col_area[t] = area[c0 + t];
  }
  __syncthreads();
  if (r >= n) return;
  float row[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) row[k] = sorted[r * 4 + k];
  const float row_area = area[r];
  unsigned long long bits = 0;
  for (int j = (cb == rb ? t + 1 : 0); j < cols_here; ++j) {
    if (double(nms_iou_pair(row, cols + j * 4, row_area, col_area[j])) > threshold) bits |= 1ull << j;
  }
  mask[r * col_blocks + cb] = bits;
}
}  // namespace

Tensor nms_cuda(const NmsParams& p, const std::vector<Tensor>& in) {
  check_inputs(NmsParams::kName, p.inputs(), in);
  cuda::require_gpu(NmsParams::kName);
  if (p.by_class) {  // torchvision's shift needs the largest coordinate first: made on the host, then one nms
    NmsParams plain = p;
    plain.by_class = false;
    return nms_cuda(plain, {nms_offset_boxes(p, in), in[1]});
  }
  const int64_t n = p.n;
  if (n == 0) return Tensor(DType::Int64, Shape{0});
  const cuda::DeviceBuffer boxes = cuda::to_device(in[0]), scores = cuda::to_device(in[1]);
  const cuda::DeviceBuffer classes = p.batched ? cuda::to_device(in[2]) : cuda::DeviceBuffer();
  cuda::DeviceBuffer keys(size_t(n) * 4), keys_sorted(size_t(n) * 4), index(size_t(n) * 8), order(size_t(n) * 8);
  cuda::DeviceBuffer shifted(size_t(n) * 16), sorted(size_t(n) * 16), area(size_t(n) * 4);
  const unsigned blocks = cuda::blocks_for(n, 256);
  cuda::kernel_begin();
  prepare_kernel<<<blocks, 256>>>(boxes.as<float>(), scores.as<float>(), p.batched ? classes.as<float>() : nullptr, float(p.max_wh), n,
                                  keys.as<float>(), index.as<int64_t>(), shifted.as<float>());
  cuda::check_launch("prepare_kernel (nms)");

  size_t temp_bytes = 0;
  PARITY_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, temp_bytes, keys.as<float>(), keys_sorted.as<float>(),
                                                              index.as<int64_t>(), order.as<int64_t>(), n));
  cuda::DeviceBuffer temp(temp_bytes);
  cuda::kernel_begin();
  PARITY_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp.data(), temp_bytes, keys.as<float>(), keys_sorted.as<float>(),
                                                              index.as<int64_t>(), order.as<int64_t>(), n));
  cuda::check_launch("cub::DeviceRadixSort::SortPairsDescending (nms)");

  cuda::kernel_begin();
  gather_kernel<<<blocks, 256>>>(shifted.as<float>(), order.as<int64_t>(), n, sorted.as<float>(), area.as<float>());
  cuda::check_launch("gather_kernel (nms)");

  const int64_t col_blocks = (n + kBlock - 1) / kBlock;
  if (col_blocks > 65535) throw Error("cuda nms: " + std::to_string(n) + " boxes exceed one launch's grid (65535 x 64)");
  cuda::DeviceBuffer mask(size_t(n * col_blocks) * sizeof(unsigned long long));
  cuda::kernel_begin();
  mask_kernel<<<dim3(unsigned(col_blocks), unsigned(col_blocks)), kBlock>>>(sorted.as<float>(), area.as<float>(), n, p.iou, col_blocks,
                                                                            mask.as<unsigned long long>());
  cuda::check_launch("mask_kernel (nms)");
  for (const auto* b : {&keys_sorted, &order, &sorted, &area, &mask}) b->check_guards("cuda nms");

  std::vector<unsigned long long> host_mask(static_cast<size_t>(n * col_blocks));
  std::vector<int64_t> host_order(static_cast<size_t>(n));
  PARITY_CUDA_CHECK(cudaMemcpy(host_mask.data(), mask.data(), host_mask.size() * 8, cudaMemcpyDeviceToHost));
  PARITY_CUDA_CHECK(cudaMemcpy(host_order.data(), order.data(), host_order.size() * 8, cudaMemcpyDeviceToHost));
  std::vector<unsigned long long> removed(size_t(col_blocks), 0);
  std::vector<int64_t> keep;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t rb = r / kBlock;
    if (removed[size_t(rb)] >> (r % kBlock) & 1) continue;
    keep.push_back(host_order[size_t(r)]);
    const unsigned long long* row = host_mask.data() + r * col_blocks;
    for (int64_t j = rb; j < col_blocks; ++j) removed[size_t(j)] |= row[j];
  }
  // As torchvision's CUDA nms, the greedy pass over the mask runs on the host: part of the op.
  gpu_span_end();
  Tensor out(DType::Int64, Shape{int64_t(keep.size())});
  if (!keep.empty()) std::memcpy(out.mutable_bytes(), keep.data(), keep.size() * sizeof(int64_t));
  return out;
}

}  // namespace parity
