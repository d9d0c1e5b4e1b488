// soa::SetBitIndices (parallel_do's sorted block array R): the hierarchical enumeration
// (DynaSOAr Alg. 5, sec. 4.1.5) in both strategies (tiled: one kernel with a decoupled
// look-back; chunked: top-down) and the flat one against a naive loop over level 0 (and, through
// the generator, core::BitmapRef::indices(), the host Alg. 5) on fresh random bitmaps: sizes
// around the container and level boundaries (1 to 5 levels; 4 under compute-sanitizer), empty,
// full, the last bit alone, sparse, dense, clustered; garbage past every level's last bit, which
// all must ignore. One SetBitIndices serves every size in turn (its tile tickets and epochs carry
// over); at 2^24 + 1 bits the tiled grid (4,097 blocks) is larger than what fits on the GPU at
// once. The visitor runs exactly once per entry of R. Under stream capture the enumeration falls
// back to the chunked kernels, and a captured graph gives R at every replay.
#include "heaplab/soa/set_bit_indices.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "heaplab/core/atomics.hpp"
#include "heaplab/core/hierarchical_bitmap.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "set_bit_bitmaps.hpp"

namespace core    = heaplab::core;
namespace cudart  = heaplab::cudart;
namespace soa     = heaplab::soa;
namespace bitmaps = heaplab::testing;

namespace {

/// A bitmap's words in device memory plus room for R and its length.
struct DeviceBitmap {
  cudart::device_buffer<std::uint64_t> words;
  cudart::device_buffer<std::uint32_t> out;
  cudart::device_buffer<std::uint32_t> count{1, "count"};

  DeviceBitmap(std::vector<std::uint64_t> const& host, std::uint32_t num_bits)
      : words(host.size(), "bitmap words"), out(num_bits, "R") {
    HEAPLAB_CUDA_TRY(cudaMemcpy(
        words.data(), host.data(), host.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  }

  /// R after an enumeration (count poisoned before, so an enumeration that writes no count
  /// shows).
  template <class Enumerate>
  std::vector<std::uint32_t> run(Enumerate&& enumerate, cudaStream_t stream = 0) {
    HEAPLAB_CUDA_TRY(cudaMemsetAsync(count.data(), 0xFF, sizeof(std::uint32_t), stream));
    enumerate(stream);
    HEAPLAB_CUDA_TRY(cudaStreamSynchronize(stream));
    std::uint32_t const n = cudart::value_to_host(count.data(), stream);
    if (n > out.size()) return std::vector<std::uint32_t>(1, 0xFFFFFFFFu);  // count garbage
    return cudart::to_host(out.data(), n, stream);
  }
};

/// core::BitmapRef::indices(), the host Alg. 5, on c's words. (It exists in host code only, and
/// nvcc's device pass compiles this host function too.)
std::vector<std::uint32_t> host_indices(bitmaps::BitmapCase const& c) {
#if !HEAPLAB_DEVICE_CODE
  std::vector<std::uint64_t> words = c.words;
  return core::BitmapRef<core::HostAtomics>(words.data(), c.layout).indices();
#else
  return {};
#endif
}

/// Every enumeration of c (words as given), tiled, chunked and flat, must equal c.truth.
void expect_both_equal_truth(soa::SetBitIndices& indices,
                             bitmaps::BitmapCase const& c,
                             std::vector<std::uint64_t> const& words,
                             cudaStream_t stream = 0) {
  DeviceBitmap d(words, c.layout.num_bits);
  for (auto strategy : {soa::EnumerationStrategy::tiled, soa::EnumerationStrategy::chunked}) {
    indices.set_strategy(strategy);
    auto const hierarchical = d.run(
        [&](cudaStream_t s) {
          indices.enumerate(d.words.data(), c.layout, d.out.data(), d.count.data(), s);
        },
        stream);
    EXPECT_EQ(hierarchical, c.truth)
        << (strategy == soa::EnumerationStrategy::tiled ? "tiled" : "chunked");
  }
  indices.set_strategy(soa::EnumerationStrategy::automatic);
  auto const flat = d.run(
      [&](cudaStream_t s) {
        indices.enumerate_flat(d.words.data(), c.layout.num_bits, d.out.data(), d.count.data(), s);
      },
      stream);
  EXPECT_EQ(flat, c.truth) << "flat";
}

}  // namespace

TEST(SetBitIndicesGpu, HierarchicalAndFlatEqualTheHostEnumeration) {
  HEAPLAB_REQUIRE_GPU();
  std::mt19937_64 rng(20261121);
  soa::SetBitIndices indices(64);  // grows on demand
  std::vector<std::uint32_t> sizes = bitmaps::boundary_sizes();
  sizes.push_back((1u << 22) + 1u);  // level 1 of 1025 containers: chunked as well as level 0
  if (!heaplab::testing::under_cuda_tool()) sizes.push_back((1u << 24) + 1u);  // 5 levels
  for (std::uint32_t n : sizes) {
    for (bitmaps::BitPattern pattern : bitmaps::all_patterns()) {
      bitmaps::BitmapCase const c = bitmaps::make_bitmap(n, pattern, rng);
      SCOPED_TRACE(c.name);
      ASSERT_EQ(host_indices(c), c.truth) << "the host Alg. 5 (or the generator)";
      expect_both_equal_truth(indices, c, c.words);
      {
        SCOPED_TRACE("garbage past every level's last bit");
        expect_both_equal_truth(indices, c, bitmaps::with_garbage(c));
      }
    }
  }
}

/// A visitor that counts its calls per position.
struct CountVisits {
  unsigned* hits;
  __device__ void operator()(std::uint32_t b) const { atomicAdd(hits + b, 1u); }
};

TEST(SetBitIndicesGpu, TheVisitorRunsOnceOnEveryEntryOfR) {
  HEAPLAB_REQUIRE_GPU();
  std::mt19937_64 rng(11);
  soa::SetBitIndices indices;
  for (std::uint32_t n : {1u, 4097u, 300000u}) {
    for (bitmaps::BitPattern pattern : {bitmaps::BitPattern::full, bitmaps::BitPattern::sparse}) {
      bitmaps::BitmapCase const c = bitmaps::make_bitmap(n, pattern, rng);
      SCOPED_TRACE(c.name);
      DeviceBitmap d(c.words, n);
      for (auto strategy : {soa::EnumerationStrategy::tiled, soa::EnumerationStrategy::chunked}) {
        indices.set_strategy(strategy);
        cudart::device_buffer<unsigned> hits(n, "visits");
        HEAPLAB_CUDA_TRY(cudaMemset(hits.data(), 0, n * sizeof(unsigned)));
        auto const got = d.run([&](cudaStream_t s) {
          indices.enumerate(
              d.words.data(), c.layout, d.out.data(), d.count.data(), s, CountVisits{hits.data()});
        });
        EXPECT_EQ(got, c.truth);
        std::vector<unsigned> want(n, 0);
        for (std::uint32_t b : c.truth) want[b] = 1;
        EXPECT_EQ(cudart::to_host(hits.data(), n), want)
            << (strategy == soa::EnumerationStrategy::tiled ? "tiled" : "chunked");
      }
    }
  }
}

TEST(SetBitIndicesGpu, AnEnumerationCapturedIntoAGraphIsRightAtEveryReplay) {
  HEAPLAB_REQUIRE_GPU();
  // The tiled kernel takes its ticket base and epoch from the host at launch; a graph would
  // replay them, so under capture enumerate() runs the chunked kernels. Replays interleaved with
  // direct tiled enumerations (which advance the tickets and the epoch) must all give R.
  std::mt19937_64 rng(5);
  bitmaps::BitmapCase const c = bitmaps::make_bitmap(300000, bitmaps::BitPattern::runs, rng);
  cudaStream_t stream         = nullptr;
  HEAPLAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  soa::SetBitIndices indices(c.layout.num_bits);
  indices.set_strategy(soa::EnumerationStrategy::tiled);
  DeviceBitmap d(c.words, c.layout.num_bits);
  EXPECT_TRUE(indices.uses_tiles(c.layout, stream));
  cudaGraph_t graph = nullptr;
  HEAPLAB_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  EXPECT_FALSE(indices.uses_tiles(c.layout, stream));
  indices.enumerate(d.words.data(), c.layout, d.out.data(), d.count.data(), stream);
  HEAPLAB_CUDA_TRY(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  HEAPLAB_CUDA_TRY(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    EXPECT_EQ(d.run([&](cudaStream_t s) { HEAPLAB_CUDA_TRY(cudaGraphLaunch(exec, s)); }, stream),
              c.truth);
    EXPECT_EQ(d.run(
                  [&](cudaStream_t s) {
                    indices.enumerate(d.words.data(), c.layout, d.out.data(), d.count.data(), s);
                  },
                  stream),
              c.truth)
        << "a direct (tiled) enumeration between replays";
  }
  HEAPLAB_CUDA_TRY(cudaGraphExecDestroy(exec));
  HEAPLAB_CUDA_TRY(cudaGraphDestroy(graph));
  HEAPLAB_CUDA_TRY(cudaStreamDestroy(stream));
}

TEST(SetBitIndicesGpu, TheBitmapRefOverloadAndAStreamOfItsOwn) {
  HEAPLAB_REQUIRE_GPU();
  std::mt19937_64 rng(7);
  bitmaps::BitmapCase const c = bitmaps::make_bitmap(300000, bitmaps::BitPattern::runs, rng);
  cudaStream_t stream         = nullptr;
  HEAPLAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  soa::SetBitIndices indices;
  DeviceBitmap d(c.words, c.layout.num_bits);
  core::BitmapRef<core::DeviceAtomics> const bitmap(d.words.data(), c.layout);
  auto const got = d.run(
      [&](cudaStream_t s) { indices.enumerate(bitmap, d.out.data(), d.count.data(), s); }, stream);
  EXPECT_EQ(got, c.truth);
  HEAPLAB_CUDA_TRY(cudaStreamDestroy(stream));
}

TEST(SetBitIndicesGpu, ReadsOnlyContainersWhoseSummaryBitIsSet) {
  HEAPLAB_REQUIRE_GPU();
  // Consistent levels are a precondition (quiescence, App. A.5 Def. 1): a container whose summary
  // bit is clear is never read, so a bit set there without its summary bit is not reported by
  // the hierarchical enumeration (the flat one reads level 0 only and reports it).
  std::mt19937_64 rng(3);
  bitmaps::BitmapCase c = bitmaps::make_bitmap(4096 * 3, bitmaps::BitPattern::last, rng);
  c.words[100] |= 1u;  // container 100 of level 0; its summary bit (level 1, bit 100) stays 0
  soa::SetBitIndices indices;
  DeviceBitmap d(c.words, c.layout.num_bits);
  for (auto strategy : {soa::EnumerationStrategy::tiled, soa::EnumerationStrategy::chunked}) {
    indices.set_strategy(strategy);
    auto const hierarchical = d.run([&](cudaStream_t s) {
      indices.enumerate(d.words.data(), c.layout, d.out.data(), d.count.data(), s);
    });
    EXPECT_EQ(hierarchical, c.truth);
  }
  auto const flat = d.run([&](cudaStream_t s) {
    indices.enumerate_flat(d.words.data(), c.layout.num_bits, d.out.data(), d.count.data(), s);
  });
  EXPECT_EQ(flat, (std::vector<std::uint32_t>{100u * 64u, 4096u * 3u - 1u}));
}

TEST(SetBitIndicesGpu, ZeroBitsGiveCountZero) {
  HEAPLAB_REQUIRE_GPU();
  soa::SetBitIndices indices;
  cudart::device_buffer<std::uint32_t> count(1, "count");
  for (int flat = 0; flat < 2; ++flat) {
    HEAPLAB_CUDA_TRY(cudaMemset(count.data(), 0xFF, 4));
    if (flat != 0)
      indices.enumerate_flat(nullptr, 0, nullptr, count.data());
    else
      indices.enumerate(nullptr, core::BitmapLayout::for_bits(0), nullptr, count.data());
    EXPECT_EQ(cudart::value_to_host(count.data(), cudaStream_t{0}), 0u) << "flat " << flat;
  }
}
