// The baseline of the radix sort benchmark: CUB's DeviceRadixSort::SortKeys on n random u32
// keys (keys only, ascending), device time with CUDA events, median of 20 runs after a
// warm-up, for n = 2^P of each argument (default 20 24). Build and run on the GPU machine
// (CUB ships with the CUDA toolkit):
//   nvcc -O3 -arch=sm_90 -o cub_radix_sort_cxx benchmarks/cub_radix_sort_cxx.cu
//   ./cub_radix_sort_cxx [P...]
// The same sort through CuPy is benchmarks/cub_radix_sort_cupy.py.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  std::vector<int> powers;
  for (int i = 1; i < argc; i++) {
    char* end = nullptr;
    long p = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || p < 1 || p > 30) {
      std::fprintf(stderr, "usage: %s [P...]  (sort 2^P keys, 1 <= P <= 30; default 20 24)\n"
                   "error: not a power: %s\n", argv[0], argv[i]);
      return 2;
    }
    powers.push_back(int(p));
  }
  if (powers.empty()) powers = {20, 24};
  for (int p : powers) {
    size_t n = size_t(1) << p;
    std::vector<unsigned> host(n);
    std::mt19937 rng(p);
    for (auto& k : host) k = rng();
    unsigned *in, *out, *keep;
    cudaMalloc(&in, n * 4);
    cudaMalloc(&out, n * 4);
    cudaMalloc(&keep, n * 4);
    cudaMemcpy(keep, host.data(), n * 4, cudaMemcpyHostToDevice);
    size_t temp_bytes = 0;
    cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, in, out, (int)n);
    void* temp;
    cudaMalloc(&temp, temp_bytes);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> times;
    for (int run = 0; run <= 20; run++) {
      cudaMemcpy(in, keep, n * 4, cudaMemcpyDeviceToDevice);
      cudaEventRecord(start);
      cub::DeviceRadixSort::SortKeys(temp, temp_bytes, in, out, (int)n);
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      float ms;
      cudaEventElapsedTime(&ms, start, stop);
      if (run > 0) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    std::vector<unsigned> sorted(n);
    cudaMemcpy(sorted.data(), out, n * 4, cudaMemcpyDeviceToHost);
    std::sort(host.begin(), host.end());
    printf("cub DeviceRadixSort::SortKeys n=2^%d sort_ms=%.3f %s (%s)\n", p, times[times.size() / 2],
           sorted == host ? "sorted" : "WRONG", cudaGetErrorString(cudaGetLastError()));
    cudaFree(in);
    cudaFree(out);
    cudaFree(keep);
    cudaFree(temp);
  }
}
