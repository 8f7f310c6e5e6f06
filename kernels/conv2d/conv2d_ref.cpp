// The conv2d reference: im2col in float64 and BLAS dgemm, one rounding to the output type at
// the end. Float32 products are exact in float64, so the only error before the final rounding
// is the dgemm's summation (~1e-16 relative).
//
// Work is split into tiles of output columns (pixels) of one image and group. Each tile is
// im2col'ed into a per-thread buffer and multiplied by a single-threaded dgemm, and tiles run
// on parity's thread pool. The tiling depends only on the shape, so results are the same for
// every thread count. OpenBLAS's own threads are never started: OpenBLAS is loaded when the
// reference is first called, told by OPENBLAS_NUM_THREADS to start none. Linked, it would start
// one per core in every parity process as it loads, each spinning for about 0.1 s of CPU before
// it sleeps (measured on the 2-core development VM): time taken from the threads that compare
// dumps, most of which never run this reference.
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/conv2d/conv2d.h"

namespace parity {

namespace {

using Dgemm = decltype(&cblas_dgemm);

Dgemm load_dgemm() {
  // Other threads may be running: glibc's first setenv in a process copies the environment into
  // a new array and leaves the old one in place, so a concurrent getenv stays safe (parity sets
  // no other variable). Where OpenBLAS is in the process already (LibTorch links it), it keeps
  // the threads it started, and set_threads(1) leaves them idle.
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  void* lib = dlopen(PARITY_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw Error(std::string("conv2d reference: cannot load OpenBLAS: ") + dlerror());
  const auto dgemm = reinterpret_cast<Dgemm>(dlsym(lib, "cblas_dgemm"));
  const auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"));
  if (!dgemm || !set_threads) throw Error("conv2d reference: " + std::string(PARITY_OPENBLAS_LIBRARY) + " lacks cblas_dgemm");
  set_threads(1);
  return dgemm;
}

Dgemm dgemm() {
  static const Dgemm f = load_dgemm();  // thread-safe, once; an error is thrown again next time
  return f;
}

// Column tiles of one image: at least 4 when the image has 256 pixels or more (so a few
// threads share small late layers), at most 1024 pixels each (bounding the buffers; 256 was
// measurably slower, 512 to 4096 alike on yolov5s), a multiple of 16 wide for the dgemm
// kernels. A function of the shape only, never of the thread count.
int64_t tile_columns(int64_t ohw) {
  const int64_t tiles = std::max<int64_t>((ohw + 1023) / 1024, ohw >= 256 ? 4 : 1);
  return std::min(ohw, ((ohw + tiles - 1) / tiles + 15) / 16 * 16);
}

// col[k][j] for the output pixels c0 .. c0+cols-1: the input value kernel tap k sees, or 0 in
// the padding. Walks the tile row by row so the inner loop is a strided copy.
void im2col_tile(const Conv2dParams& p, const float* image, int64_t ow_count, int64_t c0, int64_t cols, double* col) {
  const int64_t ICg = p.w[1], KH = p.w[2], KW = p.w[3], H = p.x[2], W = p.x[3];
  for (int64_t k = 0; k < ICg * KH * KW; ++k) {
    const int64_t c = k / (KH * KW), kh = (k / KW) % KH, kw = k % KW;
    const float* plane = image + c * H * W;
    double* row = col + k * cols;
    for (int64_t j = 0; j < cols;) {
      const int64_t oh = (c0 + j) / ow_count, ow0 = (c0 + j) % ow_count;
      const int64_t run = std::min(ow_count - ow0, cols - j);  // pixels left in this output row
      const int64_t ih = oh * p.stride_h - p.pad_h + kh * p.dil_h;
      if (ih < 0 || ih >= H) {
        std::fill(row + j, row + j + run, 0.0);
      } else {
        // iw = (ow0 + t) * stride + off lies inside [0, W) exactly for t in [lo, hi).
        const int64_t sw = p.stride_w, off = kw * p.dil_w - p.pad_w, first = ow0 * sw + off;
        const int64_t lo = std::clamp<int64_t>(first >= 0 ? 0 : (-first + sw - 1) / sw, 0, run);
        const int64_t hi = std::clamp<int64_t>(first >= W ? 0 : (W - 1 - first) / sw + 1, lo, run);
        double* dst = row + j;
        const float* src = plane + ih * W;
        std::fill(dst, dst + lo, 0.0);
        if (sw == 1) {
          for (int64_t t = lo; t < hi; ++t) dst[t] = double(src[first + t]);
        } else {
          for (int64_t t = lo; t < hi; ++t) dst[t] = double(src[first + t * sw]);
        }
        std::fill(dst + hi, dst + run, 0.0);
      }
      j += run;
    }
  }
}

template <typename Out> Tensor conv2d_impl(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  check_conv2d_inputs(p, x, w, bias);
  const Dgemm gemm = dgemm();

  const Shape out_shape = p.output_shape();
  Tensor out(dtype_of<Out>(), out_shape);
  if (out.numel() == 0) return out;
  const int64_t IC = p.x[1], H = p.x[2], W = p.x[3];
  const int64_t OC = p.w[0], KH = p.w[2], KW = p.w[3], OH = out_shape[2], OW = out_shape[3];
  const int64_t G = p.groups, ICg = IC / G, OCg = OC / G, K = ICg * KH * KW, OHW = OH * OW;
  const int64_t T = tile_columns(OHW), tiles_per_image = (OHW + T - 1) / T;

  std::vector<double> wd(size_t(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) wd[size_t(i)] = w.data<float>()[i];
  const float* xp = x.data<float>();
  const float* bp = bias ? bias->data<float>() : nullptr;
  Out* op = out.mutable_data<Out>();

  // One task = (image n, group g, column tile t).
  parallel_for(p.x[0] * G * tiles_per_image, 1, [&](int64_t t0, int64_t t1) {
    std::vector<double> col(size_t(K * T)), acc(size_t(OCg * T));
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t n = task / (G * tiles_per_image), g = (task / tiles_per_image) % G;
      const int64_t c0 = (task % tiles_per_image) * T, cols = std::min(T, OHW - c0);
      im2col_tile(p, xp + (n * IC + g * ICg) * H * W, OW, c0, cols, col.data());
      gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(OCg), int(cols), int(K), 1.0,
                  wd.data() + g * OCg * K, int(K), col.data(), int(cols), 0.0, acc.data(), int(cols));
      for (int64_t o = 0; o < OCg; ++o) {
        const double b = bp ? double(bp[g * OCg + o]) : 0.0;
        Out* dst = op + ((n * OC) + g * OCg + o) * OHW + c0;
        const double* a = acc.data() + o * cols;
        for (int64_t j = 0; j < cols; ++j) dst[j] = Out(a[j] + b);
      }
    }
  });
  return out;
}

}  // namespace

Tensor conv2d_ref(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  return conv2d_impl<float>(p, x, w, bias);
}

Tensor conv2d_ref_f64(const Conv2dParams& p, const Tensor& x, const Tensor& w, const Tensor* bias) {
  return conv2d_impl<double>(p, x, w, bias);
}

}  // namespace parity
