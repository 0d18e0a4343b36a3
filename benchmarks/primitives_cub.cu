// CUB's device-wide primitives, the baseline of rgpu-primitives' benchmark
// (benchmarks/primitives_bench.rs prints the same op names): device time with CUDA events,
// median of 20 runs after a warm-up, the temporary storage allocated once per size outside
// the timing (as rgpu's Primitives keeps its scratch). Build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -o primitives_cub benchmarks/primitives_cub.cu
//   ./primitives_cub [16 18 20 22 24 26]
// Prints `bench backend=cub op=OP n=2^P ms=MEDIAN min=MIN max=MAX gbs=G`, G = n * element
// bytes / time (each element counted once; `copy_u32`, a plain copy kernel beside them as
// the bandwidth reference, counts each word's read and write: n * 8 bytes / time).
#include <cub/cub.cuh>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e = (call);                                                             \
    if (e != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));        \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

struct Stats {
  float median, min, max;
};

// `runs` timed runs of `work` after a warm-up; `reset` before each, not timed.
static Stats timed(int runs, const std::function<void()>& reset, const std::function<void()>& work) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int run = 0; run <= runs; run++) {
    reset();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(start));
    work();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (run > 0) times.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front(), times.back()};
}

// A reduction reads its one result back: timed on the host's clock from a synced device
// to the result in host memory, as rgpu's benchmark times its reductions.
static Stats timed_host(int runs, const std::function<void()>& work) {
  std::vector<float> times;
  for (int run = 0; run <= runs; run++) {
    CHECK(cudaDeviceSynchronize());
    auto start = std::chrono::steady_clock::now();
    work();
    auto end = std::chrono::steady_clock::now();
    if (run > 0) times.push_back(std::chrono::duration<float, std::milli>(end - start).count());
  }
  CHECK(cudaGetLastError());
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front(), times.back()};
}

static void report(const char* op, int p, size_t bytes, Stats s) {
  double gbs = double(bytes) / (s.median * 1e-3) / 1e9;
  printf("bench backend=cub op=%s n=2^%d ms=%.3f min=%.3f max=%.3f gbs=%.1f\n", op, p, s.median, s.min,
         s.max, gbs);
  fflush(stdout);
}

// The bandwidth reference: one word a thread, as rgpu-primitives' `prim_copy`.
__global__ void copy_u32(const uint32_t* __restrict__ src, uint32_t* __restrict__ dst, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

struct Temp {
  void* ptr = nullptr;
  size_t bytes = 0;
  void ensure(size_t need) {
    if (need > bytes) {
      if (ptr) CHECK(cudaFree(ptr));
      CHECK(cudaMalloc(&ptr, need));
      bytes = need;
    }
  }
  ~Temp() {
    if (ptr) cudaFree(ptr);
  }
};

int main(int argc, char** argv) {
  std::vector<int> powers;
  for (int i = 1; i < argc; i++) powers.push_back(atoi(argv[i]));
  if (powers.empty()) powers = {16, 18, 20, 22, 24, 26};
  const int runs = 20;
  for (int p : powers) {
    size_t n = size_t(1) << p;
    int ni = int(n);
    std::mt19937_64 rng(p);
    std::vector<uint32_t> words(n);
    std::vector<uint64_t> wide(n);
    std::vector<float> finite(n);
    for (size_t i = 0; i < n; i++) {
      uint64_t r = rng();
      words[i] = uint32_t(r);
      wide[i] = rng();
      finite[i] = float(words[i] % 2001) / 7.0f - 100.0f;
    }
    uint32_t *keep32, *in32, *out32, *vin, *vout;
    uint64_t *keep64, *in64, *out64;
    float *fin, *fout;
    CHECK(cudaMalloc(&keep32, n * 4));
    CHECK(cudaMalloc(&in32, n * 4));
    CHECK(cudaMalloc(&out32, n * 4));
    CHECK(cudaMalloc(&vin, n * 4));
    CHECK(cudaMalloc(&vout, n * 4));
    CHECK(cudaMalloc(&keep64, n * 8));
    CHECK(cudaMalloc(&in64, n * 8));
    CHECK(cudaMalloc(&out64, n * 8));
    CHECK(cudaMalloc(&fin, n * 4));
    CHECK(cudaMalloc(&fout, 4));
    CHECK(cudaMemcpy(keep32, words.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(keep64, wide.data(), n * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(fin, finite.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<uint32_t> iota(n);
    for (size_t i = 0; i < n; i++) iota[i] = uint32_t(i);
    CHECK(cudaMemcpy(vin, iota.data(), n * 4, cudaMemcpyHostToDevice));
    Temp temp;
    size_t need = 0;
    auto reset32 = [&] { CHECK(cudaMemcpy(in32, keep32, n * 4, cudaMemcpyDeviceToDevice)); };
    auto nothing = [] {};

    // Keys (u32; f32 is the same bits sorted as floats), u64, pairs u32 -> u32.
    cub::DeviceRadixSort::SortKeys(nullptr, need, in32, out32, ni);
    temp.ensure(need);
    report("sort_u32", p, n * 4, timed(runs, reset32, [&] {
             size_t b = temp.bytes;
             cub::DeviceRadixSort::SortKeys(temp.ptr, b, in32, out32, ni);
           }));
    float* fkeys = reinterpret_cast<float*>(in32);
    float* fsorted = reinterpret_cast<float*>(out32);
    cub::DeviceRadixSort::SortKeys(nullptr, need, fkeys, fsorted, ni);
    temp.ensure(need);
    report("sort_f32", p, n * 4, timed(runs, reset32, [&] {
             size_t b = temp.bytes;
             cub::DeviceRadixSort::SortKeys(temp.ptr, b, fkeys, fsorted, ni);
           }));
    cub::DeviceRadixSort::SortKeys(nullptr, need, in64, out64, ni);
    temp.ensure(need);
    report("sort_u64", p, n * 8,
           timed(runs, [&] { CHECK(cudaMemcpy(in64, keep64, n * 8, cudaMemcpyDeviceToDevice)); },
                 [&] {
                   size_t b = temp.bytes;
                   cub::DeviceRadixSort::SortKeys(temp.ptr, b, in64, out64, ni);
                 }));
    cub::DeviceRadixSort::SortPairs(nullptr, need, in32, out32, vin, vout, ni);
    temp.ensure(need);
    report("sort_pairs_u32", p, n * 8, timed(runs, reset32, [&] {
             size_t b = temp.bytes;
             cub::DeviceRadixSort::SortPairs(temp.ptr, b, in32, out32, vin, vout, ni);
           }));

    // Scans of u32 (wrapping, as rgpu's).
    cub::DeviceScan::ExclusiveSum(nullptr, need, keep32, out32, ni);
    temp.ensure(need);
    report("exclusive_scan_u32", p, n * 4, timed(runs, nothing, [&] {
             size_t b = temp.bytes;
             cub::DeviceScan::ExclusiveSum(temp.ptr, b, keep32, out32, ni);
           }));
    cub::DeviceScan::InclusiveSum(nullptr, need, keep32, out32, ni);
    temp.ensure(need);
    report("inclusive_scan_u32", p, n * 4, timed(runs, nothing, [&] {
             size_t b = temp.bytes;
             cub::DeviceScan::InclusiveSum(temp.ptr, b, keep32, out32, ni);
           }));

    // Reductions: sum u32, sum f32, max f32, each with its one word read back (timed_host).
    uint32_t host32;
    float hostf;
    cub::DeviceReduce::Sum(nullptr, need, keep32, out32, ni);
    temp.ensure(need);
    report("reduce_sum_u32", p, n * 4, timed_host(runs, [&] {
             size_t b = temp.bytes;
             cub::DeviceReduce::Sum(temp.ptr, b, keep32, out32, ni);
             CHECK(cudaMemcpy(&host32, out32, 4, cudaMemcpyDeviceToHost));
           }));
    cub::DeviceReduce::Sum(nullptr, need, fin, fout, ni);
    temp.ensure(need);
    report("reduce_sum_f32", p, n * 4, timed_host(runs, [&] {
             size_t b = temp.bytes;
             cub::DeviceReduce::Sum(temp.ptr, b, fin, fout, ni);
             CHECK(cudaMemcpy(&hostf, fout, 4, cudaMemcpyDeviceToHost));
           }));
    cub::DeviceReduce::Max(nullptr, need, fin, fout, ni);
    temp.ensure(need);
    report("reduce_max_f32", p, n * 4, timed_host(runs, [&] {
             size_t b = temp.bytes;
             cub::DeviceReduce::Max(temp.ptr, b, fin, fout, ni);
             CHECK(cudaMemcpy(&hostf, fout, 4, cudaMemcpyDeviceToHost));
           }));

    int* ikeep = reinterpret_cast<int*>(keep32);
    int* iout = reinterpret_cast<int*>(out32);
    int hosti;
    cub::DeviceReduce::Min(nullptr, need, ikeep, iout, ni);
    temp.ensure(need);
    report("reduce_min_i32", p, n * 4, timed_host(runs, [&] {
             size_t b = temp.bytes;
             cub::DeviceReduce::Min(temp.ptr, b, ikeep, iout, ni);
             CHECK(cudaMemcpy(&hosti, iout, 4, cudaMemcpyDeviceToHost));
           }));
    (void)hosti;
    report("copy_u32", p, n * 8, timed(runs, nothing, [&] {
             copy_u32<<<unsigned((n + 255) / 256), 256>>>(keep32, out32, n);
           }));

    // Histogram of 256 bins over values 0..255 (HistogramEven, levels 0..256).
    std::vector<uint32_t> bytes(n);
    for (size_t i = 0; i < n; i++) bytes[i] = words[i] & 0xff;
    CHECK(cudaMemcpy(in32, bytes.data(), n * 4, cudaMemcpyHostToDevice));
    int* counts;
    CHECK(cudaMalloc(&counts, 256 * sizeof(int)));
    cub::DeviceHistogram::HistogramEven(nullptr, need, in32, counts, 257, 0u, 256u, ni);
    temp.ensure(need);
    report("histogram_256", p, n * 4, timed(runs, nothing, [&] {
             size_t b = temp.bytes;
             cub::DeviceHistogram::HistogramEven(temp.ptr, b, in32, counts, 257, 0u, 256u, ni);
           }));
    (void)host32;
    (void)hostf;
    CHECK(cudaFree(counts));
    for (void* ptr : {(void*)keep32, (void*)in32, (void*)out32, (void*)vin, (void*)vout, (void*)keep64,
                      (void*)in64, (void*)out64, (void*)fin, (void*)fout})
      CHECK(cudaFree(ptr));
  }
}
