// OuroborosWaves (ouroboros_bench.hpp): Ouroboros' device malloc and free in whole waves, a
// preset fill, and fig12's probe with Ouroboros as the page source. The only translation unit of
// heaplab_bench that includes Ouroboros (through ouroboros_instance.cuh, shared with the malloc
// family's peer, which heaplab_bench does not link). Built only with HEAPLAB_OUROBOROS_DIR.
//
// Linearization points and memory orders: Ouroboros' own (its queues' atomics and semaphores);
// this file only calls its malloc / free and relies on kernel boundaries between waves.
#include "ouroboros_bench.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/families/malloc/gpu/ouroboros_instance.cuh"
#include "heaplab/families/malloc/ouroboros_geometry.hpp"
#include "rw_hash_join.cuh"
#include "timing.hpp"

namespace heaplab::bench {

namespace {

namespace ouro = malloc_family::ouroboros;

/// Thread i asks instance o for bytes[i] and writes its grant's offset from `data` (the first
/// chunk), or kNull. A request above the largest page gets null without a call (Ouroboros would
/// pass it to CUDA's device malloc).
template <class O>
__global__ void alloc_wave(O* o,
                           memory_t const* data,
                           std::uint32_t const* bytes,
                           std::uint64_t* offsets,
                           std::uint32_t n) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::uint32_t const b = bytes[i];
  void* const p         = b == 0 || b > ouro::kLargestPage ? nullptr : o->malloc(std::size_t{b});
  offsets[i]            = p == nullptr ? OuroborosWaves::kNull
                                       : static_cast<std::uint64_t>(static_cast<memory_t const*>(p) - data);
}

/// Thread i < n asks for `bytes` and keeps what it gets (a preset: nothing is read back).
template <class O>
__global__ void fill_wave(O* o, std::uint32_t bytes, std::uint64_t n) {
  std::uint64_t const i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) (void)o->malloc(std::size_t{bytes});
}

/// Thread i gives back the grant at offsets[i] (none for kNull).
template <class O>
__global__ void free_wave(O* o, memory_t* data, std::uint64_t const* offsets, std::uint32_t n) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || offsets[i] == OuroborosWaves::kNull) return;
  o->free(data + offsets[i]);
}

/// Ouroboros' chunk counter (Memory::next_free_chunk: the chunks it has taken, in bump order).
template <class O>
__global__ void read_chunks_taken(O const* o, std::uint64_t* out) {
  *out = o->memory.next_free_chunk;
}

/// fig12's page source (rw/page_sources.cuh's interface): one Ouroboros page of page_bytes per
/// call, numbered as a page of all chunks; a grant in the guard or numbered past data's pages is
/// a failed page, a grant that is not a page of a chunk counts in *wrong (and fails too).
template <class O>
struct PageSource {
  O* o;
  memory_t const* data;
  std::uint32_t page_bytes;
  std::uint64_t pool_chunks;
  std::uint64_t guard_chunks;
  std::uint32_t pages;  // the data region's: a page numbered at or past it fails
  unsigned long long* wrong;
  __device__ __forceinline__ rw::GetPageResult operator()(rw::PageRng&, std::uint32_t) const {
    rw::GetPageResult r;
    void* const p = o->malloc(std::size_t{page_bytes});
    if (p == nullptr) return r;
    auto const off      = static_cast<std::uint64_t>(static_cast<memory_t const*>(p) - data);
    ouro::Grant const g = ouro::classify(off, page_bytes, pool_chunks, guard_chunks);
    if (g == ouro::Grant::in_pool) {
      std::uint64_t const page = ouro::page_number(off, page_bytes);
      if (page < pages) r.page = static_cast<std::uint32_t>(page);  // else past data's pages
    } else if (g != ouro::Grant::in_guard) {
      atomicAdd(wrong, 1ull);
    }
    return r;
  }
};

unsigned blocks_for(std::uint64_t n, std::uint32_t block_threads) {
  std::uint64_t const blocks = (n + block_threads - 1) / block_threads;
  if (blocks > 0x7FFFFFFFull)
    throw std::invalid_argument("Ouroboros wave of " + std::to_string(n) +
                                " threads: more blocks than a grid holds");
  return static_cast<unsigned>(blocks);
}

}  // namespace

struct OuroborosWaves::Impl {
  Impl()                                          = default;
  Impl(Impl const&)                               = delete;
  Impl& operator=(Impl const&)                    = delete;
  virtual ~Impl()                                 = default;
  virtual void reset()                            = 0;
  virtual void alloc(std::uint32_t const* bytes,
                     std::uint64_t* offsets,
                     std::uint32_t n,
                     std::uint32_t block_threads) = 0;
  virtual void free(std::uint64_t const* offsets, std::uint32_t n, std::uint32_t block_threads) = 0;
  virtual void fill(std::uint32_t bytes, std::uint64_t n, std::uint32_t block_threads)          = 0;
  virtual void probe(OuroborosProbe const& p)                                                   = 0;
  [[nodiscard]] virtual std::uint64_t chunks_taken() const                                      = 0;
  [[nodiscard]] virtual char const* name() const                                                = 0;
  std::uint64_t pool_chunks                                                                     = 0;
  std::uint64_t guard_chunks                                                                    = 0;
};

namespace {

template <class O>
struct InstanceImpl final : OuroborosWaves::Impl {
  InstanceImpl(char const* name, std::uint64_t pool, std::uint64_t guard) : name_(name) {
    pool_chunks  = pool;
    guard_chunks = guard;
    InstanceImpl::reset();
  }
  ~InstanceImpl() override { ouro::drop_instance(host_); }
  InstanceImpl(InstanceImpl const&)            = delete;
  InstanceImpl& operator=(InstanceImpl const&) = delete;
  void reset() override {
    ouro::drop_instance(host_);
    // One chunk more than pool and guard: Ouroboros never hands out its last chunk.
    host_ = ouro::make_instance<O>(pool_chunks + guard_chunks + 1, name_);
  }
  void alloc(std::uint32_t const* bytes,
             std::uint64_t* offsets,
             std::uint32_t n,
             std::uint32_t block_threads) override {
    alloc_wave<O><<<blocks_for(n, block_threads), block_threads>>>(
        device(), host_->memory.d_data, bytes, offsets, n);
    HEAPLAB_CHECK_LAUNCH();
  }
  void free(std::uint64_t const* offsets, std::uint32_t n, std::uint32_t block_threads) override {
    free_wave<O><<<blocks_for(n, block_threads), block_threads>>>(
        device(), host_->memory.d_data, offsets, n);
    HEAPLAB_CHECK_LAUNCH();
  }
  void fill(std::uint32_t bytes, std::uint64_t n, std::uint32_t block_threads) override {
    fill_wave<O><<<blocks_for(n, block_threads), block_threads>>>(device(), bytes, n);
    HEAPLAB_CHECK_LAUNCH();
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }
  void probe(OuroborosProbe const& p) override {
    PageSource<O> const source{device(),
                               host_->memory.d_data,
                               p.page_words * 4,
                               pool_chunks,
                               guard_chunks,
                               p.pages,
                               p.wrong};
    join::probe_kernel<<<blocks_for(p.n, p.block_threads), p.block_threads>>>(
        source, p.s_key, p.n, p.table, p.mask, p.seed, p.data, p.page_words, p.out_page, p.failed);
    HEAPLAB_CHECK_LAUNCH();
  }
  [[nodiscard]] std::uint64_t chunks_taken() const override {
    cudart::device_buffer<std::uint64_t> out(1, "Ouroboros chunk counter");
    read_chunks_taken<O><<<1, 1>>>(host_->getDeviceMemoryManager(), out.data());
    HEAPLAB_CHECK_LAUNCH();
    return cudart::value_to_host(out.data());
  }
  [[nodiscard]] char const* name() const override { return name_; }

 private:
  O* device() const { return host_->getDeviceMemoryManager(); }
  char const* name_;
  std::unique_ptr<O> host_;
};

}  // namespace

namespace {

constexpr std::pair<OuroborosWaves::Queues, char const*> kInstances[] = {
    {OuroborosWaves::Queues::page, "ouroboros-page"},
    {OuroborosWaves::Queues::chunk, "ouroboros-chunk"},
    {OuroborosWaves::Queues::va_page, "ouroboros-va-page"},
    {OuroborosWaves::Queues::va_chunk, "ouroboros-va-chunk"},
    {OuroborosWaves::Queues::vl_page, "ouroboros-vl-page"},
    {OuroborosWaves::Queues::vl_chunk, "ouroboros-vl-chunk"}};

template <class O>
std::unique_ptr<OuroborosWaves::Impl> make_impl(OuroborosWaves::Queues q,
                                                std::uint64_t pool,
                                                std::uint64_t guard) {
  static_assert(O::ChunkBase::size() == ouro::kChunkStride &&
                    O::ConcreteOuroboros::LargestPageSize_ == ouro::kLargestPage,
                "an Ouroboros instance whose chunks or pages are not the geometry's");
  return std::make_unique<InstanceImpl<O>>(OuroborosWaves::name_of(q), pool, guard);
}

}  // namespace

char const* OuroborosWaves::name_of(Queues q) {
  for (auto const& [queues, name] : kInstances)
    if (queues == q) return name;
  return "ouroboros-?";
}

std::vector<std::string> OuroborosWaves::names() {
  std::vector<std::string> all;
  for (auto const& instance : kInstances) all.emplace_back(instance.second);
  return all;
}

std::optional<OuroborosWaves::Queues> OuroborosWaves::parse(std::string const& name) {
  for (auto const& [queues, n] : kInstances)
    if (name == n) return queues;
  return std::nullopt;
}

OuroborosWaves::OuroborosWaves(Queues queues, std::uint64_t pool, std::uint64_t guard) {
  if (pool == 0) throw std::invalid_argument("OuroborosWaves: a pool of 0 chunks");
  switch (queues) {
    case Queues::page:
      impl_ = make_impl<OuroPQ>(queues, pool, guard);
      break;
    case Queues::chunk:
      impl_ = make_impl<OuroCQ>(queues, pool, guard);
      break;
    case Queues::va_page:
      impl_ = make_impl<OuroVAPQ>(queues, pool, guard);
      break;
    case Queues::va_chunk:
      impl_ = make_impl<OuroVACQ>(queues, pool, guard);
      break;
    case Queues::vl_page:
      impl_ = make_impl<OuroVLPQ>(queues, pool, guard);
      break;
    case Queues::vl_chunk:
      impl_ = make_impl<OuroVLCQ>(queues, pool, guard);
      break;
  }
  if (!impl_) throw std::invalid_argument("OuroborosWaves: unknown queues");
}

OuroborosWaves::~OuroborosWaves() = default;

char const* OuroborosWaves::name() const { return impl_->name(); }

void OuroborosWaves::reset() { impl_->reset(); }

std::vector<std::uint64_t> OuroborosWaves::allocate(std::vector<std::uint32_t> const& bytes,
                                                    std::uint32_t block_threads,
                                                    float* ms) {
  auto const n = static_cast<std::uint32_t>(bytes.size());
  *ms          = 0;
  if (n == 0) return {};
  cudart::device_buffer<std::uint32_t> d_bytes(n, "Ouroboros request sizes");
  cudart::device_buffer<std::uint64_t> d_offsets(n, "Ouroboros grants");
  cudart::copy_to_device_async(d_bytes.data(), bytes.data(), n, nullptr);
  *ms = time_once_ms([&] { impl_->alloc(d_bytes.data(), d_offsets.data(), n, block_threads); });
  return cudart::to_host(d_offsets.data(), n);
}

void OuroborosWaves::free(std::vector<std::uint64_t> const& offsets,
                          std::uint32_t block_threads,
                          float* ms) {
  auto const n = static_cast<std::uint32_t>(offsets.size());
  *ms          = 0;
  if (n == 0) return;
  cudart::device_buffer<std::uint64_t> d_offsets(n, "Ouroboros grants");
  cudart::copy_to_device_async(d_offsets.data(), offsets.data(), n, nullptr);
  *ms = time_once_ms([&] { impl_->free(d_offsets.data(), n, block_threads); });
}

void OuroborosWaves::fill(std::uint32_t bytes, std::uint64_t count, std::uint32_t block_threads) {
  if (count > 0) impl_->fill(bytes, count, block_threads);
}

float OuroborosWaves::probe(OuroborosProbe const& p) {
  return time_once_ms([&] { impl_->probe(p); });
}

std::uint64_t OuroborosWaves::pool_chunks() const { return impl_->pool_chunks; }

std::uint64_t OuroborosWaves::usable_chunks() const {
  return impl_->pool_chunks + impl_->guard_chunks;
}

std::uint64_t OuroborosWaves::chunks_taken() const { return impl_->chunks_taken(); }

}  // namespace heaplab::bench
