// `heaplab_apps structure` (structure.hpp; docs/apps.md "structure"): the fracture simulation of
// DynaSOAr Table 1 "structure" and CompactGpu Fig. 12 on soa::Heap. Every mesh node is a `Node`
// object and every spring a `Spring` object (two Node pointer fields, rest length, breaking
// threshold); a node lists its springs in six pointer slots (model.hpp). All objects are made up
// front, afterwards the app only destroys (DynaSOAr sec. 5 category 2). One iteration is five
// phases on the heap's stream:
//
//   force:  parallel_do<Node, &Node::compute_force>: a node sums the forces of its springs in slot
//           order (reads positions, writes only its own force).
//   move:   parallel_do<Node, &Node::move>: integrate (model.hpp integrate); writes only itself.
//   break:  parallel_do<Spring, &Spring::check_break>: a spring whose strain exceeds its threshold
//           clears its own slot in both endpoints' lists and destroys itself.
//   bfs:    parallel_do<Node, &Node::bfs_init> (anchors 0, others unreached), then rounds
//           d = 0, 1, ... of parallel_do<Node, &Node::bfs_visit>: a node at distance d claims
//           every unreached neighbour with atomicCAS(unreached -> d + 1) (DynaSOAr's BFS, the
//           frontier as iterations of a do-all [33]); the host reads a "changed" flag every 4
//           rounds and stops after a batch without a claim.
//   remove: parallel_do<Spring, &Spring::remove_if_unreached> destroys the springs of unreached
//           nodes, then parallel_do<Node, &Node::remove_if_unreached> the nodes.
//
// Memory orders: within a phase every object writes only its own fields, except (break) a
// spring's own slot in its endpoints' lists (one writer per slot, no reader in that phase) and
// (bfs) the CAS on a neighbour's distance (relaxed; linearization point of a claim: the CAS that
// returns kUnreached; a node reads its own distance as the old or the new value, and the new one
// is d + 1 != d, so both decide the same) and the relaxed atomicOr on the changed flag. Phases are
// kernels on one stream, so a kernel boundary orders every write of a phase before the next phase.
// Springs join nodes of one component, so a live spring with an unreached endpoint has two.
//
// The baseline (DynaSOAr's "baseline" column, category 2: an alive flag per object): the same
// phases and the same arithmetic on static SOA arrays indexed by id. Both add forces in slot order
// with exactly rounded operations (model.hpp), so their counts agree at every iteration; --check
// with --baseline requires that.
//
// Other allocators (--allocators; DynaSOAr Fig. 10; common/any_heap.cuh): the same Node and Spring
// classes and the same phases (step_on, graph_of) on AnyHeap<Types, Allocator>, AOS objects from
// the allocator's malloc and the standalone do-all. The order of the objects in a do-all does not
// change any result (every object decides from its own slots in slot order, the BFS distances are
// levels), so their counts agree with the heap's at every iteration too; --check requires that.
//
// --memory-mib / --only (memory_budget.hpp; DynaSOAr Fig. 11): the heap's blocks, the
// allocators' pool and the baseline's object arrays (DeviceMesh::bytes) get the same bytes.
// Objects are made only at set-up (no spring is made once a node failed), so a null there ends
// the variant with OutOfMemory (exit 5); the cumulative counts are read again at every --check
// point and at the end.
#include "common/allocators.cuh"
#include "common/allocators.hpp"
#include "common/any_heap.cuh"
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
#include "common/memory_budget.hpp"
#include "common/no_device.hpp"
#include "common/result_line.hpp"
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heaplab/check/invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "model.hpp"
#include "reference.hpp"
#include "structure.hpp"
#include "timing.hpp"

namespace heaplab::apps::structure {

struct Types;
class Spring;

/// Device counters: [0] broken springs, [1] springs removed with their nodes, [2] removed nodes.
using Counter = unsigned long long;

class Node {
 public:
  HEAPLAB_SOA_FIELDS(Node,
                     (float, x_),
                     (float, y_),
                     (float, vx_),
                     (float, vy_),
                     (float, fx_),
                     (float, fy_),
                     (float, mass_),
                     (std::uint32_t, distance_),
                     (std::uint32_t, id_),
                     (std::uint8_t, kind_),
                     (Spring* [kMaxDegree], springs_));

  HEAPLAB_HD Node(std::uint32_t id, std::uint8_t kind, float x, float y, float mass)
      : x_(x),
        y_(y),
        vx_(0.0f),
        vy_(0.0f),
        fx_(0.0f),
        fy_(0.0f),
        mass_(mass),
        distance_(std::uint32_t{kUnreached}),
        id_(id),
        kind_(kind) {}

  __device__ void compute_force(Physics p);
  __device__ void move(Physics p);
  __device__ void bfs_init() { distance_ = kind_ == kAnchor ? 0u : kUnreached; }
  __device__ void bfs_visit(std::uint32_t d, unsigned* changed);
  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void remove_if_unreached(Ref heap, Counter* counters);
  __device__ void export_record(NodeRecord* out, Counter* n);
};

class Spring {
 public:
  HEAPLAB_SOA_FIELDS(Spring,
                     (Node*, a_),
                     (Node*, b_),
                     (float, rest_),
                     (float, threshold_),
                     (std::uint32_t, id_),
                     (std::uint8_t, slot_a_),
                     (std::uint8_t, slot_b_));

  HEAPLAB_HD Spring(Node* a,
                    Node* b,
                    float rest,
                    float threshold,
                    std::uint32_t id,
                    std::uint8_t slot_a,
                    std::uint8_t slot_b)
      : a_(a),
        b_(b),
        rest_(rest),
        threshold_(threshold),
        id_(id),
        slot_a_(slot_a),
        slot_b_(slot_b) {}

  [[nodiscard]] __device__ Node* other(Node const* n) {
    Node* const a = a_;
    return a == n ? b_.get() : a;
  }
  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void check_break(Ref heap, Counter* counters, Physics p);
  template <class Ref>
  __device__ void remove_if_unreached(Ref heap, Counter* counters);
  __device__ void export_record(SpringRecord* out, Counter* n);
};

struct Types : soa::HeapTypes<Node, Spring> {};

__device__ void Node::compute_force(Physics p) {
  float const x = x_;
  float const y = y_;
  float fx      = 0.0f;
  float fy      = 0.0f;
  for (int k = 0; k < kMaxDegree; ++k) {
    Spring* const s = springs_[k];
    if (s == nullptr) continue;
    Node* const o = s->other(this);
    add_spring_force(p, x, y, o->x_, o->y_, s->rest_, fx, fy);
  }
  fx_ = fx;
  fy_ = fy;
}

__device__ void Node::move(Physics p) {
  float x = x_, y = y_, vx = vx_, vy = vy_;
  integrate(p, kind_, mass_, fx_, fy_, x, y, vx, vy);
  x_  = x;
  y_  = y;
  vx_ = vx;
  vy_ = vy;
}

__device__ void Node::bfs_visit(std::uint32_t d, unsigned* changed) {
  // Own distance: only a CAS kUnreached -> d + 1 may change it in this round (see the header).
  // order: relaxed (the previous round's kernel wrote d; this round's CASes only turn kUnreached
  // into d + 1)
  if (*static_cast<volatile std::uint32_t*>(&distance_) != d) return;
  for (int k = 0; k < kMaxDegree; ++k) {
    Spring* const s = springs_[k];
    if (s == nullptr) continue;
    Node* const o = s->other(this);
    // order: relaxed (the CAS claims a node for round d + 1; changed is read by the host after the
    // kernel)
    if (atomicCAS(&o->distance_, kUnreached, d + 1u) == kUnreached) atomicOr(changed, 1u);
  }
}

template <class Ref>
__device__ void Node::remove_if_unreached(Ref heap, Counter* counters) {
  if (distance_ != kUnreached) return;
  // order: relaxed (a count, read by the host after the kernel)
  atomicAdd(&counters[2], 1ull);
  heap.destroy(this);
}

__device__ void Node::export_record(NodeRecord* out, Counter* n) {
  NodeRecord r;
  r.self     = reinterpret_cast<std::uintptr_t>(this);
  r.id       = id_;
  r.kind     = kind_;
  r.x        = x_;
  r.y        = y_;
  r.distance = distance_;
  for (int k = 0; k < kMaxDegree; ++k)
    r.springs[k] = reinterpret_cast<std::uintptr_t>(static_cast<Spring*>(springs_[k]));
  // order: relaxed (a unique output index; the output is read after the kernel)
  out[atomicAdd(n, 1ull)] = r;
}

template <class Ref>
__device__ void Spring::check_break(Ref heap, Counter* counters, Physics p) {
  Node* const a = a_;
  Node* const b = b_;
  if (!spring_breaks(p, a->x_, a->y_, b->x_, b->y_, rest_, threshold_)) return;
  a->springs_[slot_a_] = nullptr;  // this spring's own slots: one writer each
  b->springs_[slot_b_] = nullptr;
  // order: relaxed (a count, read by the host after the kernel)
  atomicAdd(&counters[0], 1ull);
  heap.destroy(this);
}

template <class Ref>
__device__ void Spring::remove_if_unreached(Ref heap, Counter* counters) {
  if constexpr (kMutantKeepOrphanSprings) return;  // MUTANT structure_keep_orphan_springs
  if (a_->distance_ != kUnreached && b_->distance_ != kUnreached) return;
  // order: relaxed (a count, read by the host after the kernel)
  atomicAdd(&counters[1], 1ull);
  heap.destroy(this);
}

__device__ void Spring::export_record(SpringRecord* out, Counter* n) {
  SpringRecord r;
  r.self      = reinterpret_cast<std::uintptr_t>(this);
  r.id        = id_;
  r.a         = reinterpret_cast<std::uintptr_t>(static_cast<Node*>(a_));
  r.b         = reinterpret_cast<std::uintptr_t>(static_cast<Node*>(b_));
  r.rest      = rest_;
  r.threshold = threshold_;
  // order: relaxed (a unique output index; the output is read after the kernel)
  out[atomicAdd(n, 1ull)] = r;
}

namespace {

using Heap = soa::Heap<Types>;

constexpr int kBfsBatch = 4;  // BFS rounds between reads of the changed flag

/// The mesh on the device (SOA arrays by id); also the baseline's state.
struct MeshView {
  std::uint32_t n = 0, s = 0;
  float *x = nullptr, *y = nullptr, *vx = nullptr, *vy = nullptr, *fx = nullptr, *fy = nullptr,
        *mass              = nullptr;
  std::uint8_t* kind       = nullptr;
  std::uint32_t* distance  = nullptr;
  std::uint8_t* node_alive = nullptr;
  std::int32_t* slots      = nullptr;  // slot k of node i at k * n + i; -1: none
  std::uint32_t *a = nullptr, *b = nullptr;
  std::uint8_t *slot_a = nullptr, *slot_b = nullptr;
  float *rest = nullptr, *threshold = nullptr;
  std::uint8_t* spring_alive = nullptr;
};

class DeviceMesh {
 public:
  /// The bytes of the arrays, the baseline's object arrays (what Node and Spring objects hold;
  /// --memory-mib counts them, memory_budget.hpp): per node position, velocity, force and mass
  /// (7 floats), kind and alive (2 bytes), distance (uint32) and kMaxDegree spring slots (int32),
  /// 58 bytes; per spring rest length and threshold (2 floats), its slots in its ends' lists and
  /// alive (3 bytes), its ends (2 uint32), 19 bytes.
  static std::uint64_t bytes(Mesh const& m) {
    return floats(m) * sizeof(float) + u8s(m) + u32s(m) * sizeof(std::uint32_t) +
           slots(m) * sizeof(std::int32_t);
  }

  explicit DeviceMesh(Mesh const& m)
      : f_(floats(m), "structure floats"),
        u8_(u8s(m), "structure bytes"),
        u32_(u32s(m), "structure ids"),
        slots_(slots(m), "structure slots") {
    std::size_t const n = m.num_nodes(), s = m.num_springs();
    v_.n     = m.num_nodes();
    v_.s     = m.num_springs();
    float* f = f_.data();
    v_.x = f, v_.y = f + n, v_.vx = f + 2 * n, v_.vy = f + 3 * n, v_.fx = f + 4 * n;
    v_.fy = f + 5 * n, v_.mass = f + 6 * n, v_.rest = f + 7 * n, v_.threshold = f + 7 * n + s;
    std::uint8_t* u = u8_.data();
    v_.kind = u, v_.node_alive = u + n, v_.slot_a = u + 2 * n, v_.slot_b = u + 2 * n + s;
    v_.spring_alive = u + 2 * n + 2 * s;
    v_.distance = u32_.data(), v_.a = u32_.data() + n, v_.b = u32_.data() + n + s;
    v_.slots = slots_.data();
    std::vector<float> zeros(n, 0.0f);
    std::vector<std::uint8_t> ones(std::max(n, s), 1);
    std::vector<std::int32_t> slots(kMaxDegree * n);
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 0; k < kMaxDegree; ++k) slots[k * n + i] = m.slots[i][k];
    cudart::copy_to_device_async(v_.x, m.x.data(), n, nullptr);
    cudart::copy_to_device_async(v_.y, m.y.data(), n, nullptr);
    for (float* z : {v_.vx, v_.vy, v_.fx, v_.fy})
      cudart::copy_to_device_async(z, zeros.data(), n, nullptr);
    cudart::copy_to_device_async(v_.mass, m.mass.data(), n, nullptr);
    cudart::copy_to_device_async(v_.kind, m.kind.data(), n, nullptr);
    cudart::copy_to_device_async(v_.node_alive, ones.data(), n, nullptr);
    cudart::copy_to_device_async(v_.slots, slots.data(), slots.size(), nullptr);
    cudart::copy_to_device_async(v_.a, m.a.data(), s, nullptr);
    cudart::copy_to_device_async(v_.b, m.b.data(), s, nullptr);
    cudart::copy_to_device_async(v_.slot_a, m.slot_a.data(), s, nullptr);
    cudart::copy_to_device_async(v_.slot_b, m.slot_b.data(), s, nullptr);
    cudart::copy_to_device_async(v_.rest, m.rest.data(), s, nullptr);
    cudart::copy_to_device_async(v_.threshold, m.threshold.data(), s, nullptr);
    cudart::copy_to_device_async(v_.spring_alive, ones.data(), s, nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());  // the host vectors die with this constructor
  }
  [[nodiscard]] MeshView const& view() const { return v_; }

 private:
  // The buffers' element counts (the layout above): nodes n, springs s.
  static std::size_t floats(Mesh const& m) {
    return 7 * std::size_t{m.num_nodes()} + 2 * std::size_t{m.num_springs()};
  }
  static std::size_t u8s(Mesh const& m) {
    return 2 * std::size_t{m.num_nodes()} + 3 * std::size_t{m.num_springs()};
  }
  static std::size_t u32s(Mesh const& m) {
    return std::size_t{m.num_nodes()} + 2 * std::size_t{m.num_springs()};
  }
  static std::size_t slots(Mesh const& m) { return kMaxDegree * std::size_t{m.num_nodes()}; }

  cudart::device_buffer<float> f_;
  cudart::device_buffer<std::uint8_t> u8_;
  cudart::device_buffer<std::uint32_t> u32_;
  cudart::device_buffer<std::int32_t> slots_;
  MeshView v_;
};

// ---------------------------------------------------------------- object variants: set-up kernels
// R: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.

template <class R>
__global__ void make_nodes_kernel(R heap, MeshView m, Node** nodes, Counter* failed) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride()) {
    Node* const p = heap.template make<Node>(
        static_cast<std::uint32_t>(i), m.kind[i], m.x[i], m.y[i], m.mass[i]);
    // order: relaxed (a count, read by the host after the kernel)
    if (p == nullptr) atomicAdd(failed, 1ull);
    nodes[i] = p;
  }
}

template <class R>
__global__ void make_springs_kernel(
    R heap, MeshView m, Node** nodes, Spring** springs, Counter* failed) {
  for (std::uint64_t i = thread_index(); i < m.s; i += thread_stride()) {
    Spring* const p = heap.template make<Spring>(nodes[m.a[i]],
                                                 nodes[m.b[i]],
                                                 m.rest[i],
                                                 m.threshold[i],
                                                 static_cast<std::uint32_t>(i),
                                                 m.slot_a[i],
                                                 m.slot_b[i]);
    // order: relaxed (a count, read by the host after the kernel)
    if (p == nullptr) atomicAdd(failed, 1ull);
    springs[i] = p;
  }
}

__global__ void link_kernel(MeshView m, Node** nodes, Spring** springs) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride())
    for (int k = 0; k < kMaxDegree; ++k) {
      std::int32_t const s  = m.slots[k * std::uint64_t{m.n} + i];
      nodes[i]->springs_[k] = s < 0 ? nullptr : springs[s];
    }
}

// ---------------------------------------------------------------- baseline kernels

__device__ std::uint32_t other_end(MeshView const& m, std::int32_t s, std::uint64_t i) {
  return m.a[s] == i ? m.b[s] : m.a[s];
}

__global__ void base_force_kernel(MeshView m, Physics p) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride()) {
    if (!m.node_alive[i]) continue;
    float fx = 0.0f, fy = 0.0f;
    for (int k = 0; k < kMaxDegree; ++k) {
      std::int32_t const s = m.slots[k * std::uint64_t{m.n} + i];
      if (s < 0) continue;
      std::uint32_t const o = other_end(m, s, i);
      add_spring_force(p, m.x[i], m.y[i], m.x[o], m.y[o], m.rest[s], fx, fy);
    }
    m.fx[i] = fx;
    m.fy[i] = fy;
  }
}

__global__ void base_move_kernel(MeshView m, Physics p) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride())
    if (m.node_alive[i])
      integrate(p, m.kind[i], m.mass[i], m.fx[i], m.fy[i], m.x[i], m.y[i], m.vx[i], m.vy[i]);
}

__global__ void base_break_kernel(MeshView m, Counter* counters, Physics p) {
  for (std::uint64_t s = thread_index(); s < m.s; s += thread_stride()) {
    if (!m.spring_alive[s]) continue;
    std::uint32_t const a = m.a[s], b = m.b[s];
    if (!spring_breaks(p, m.x[a], m.y[a], m.x[b], m.y[b], m.rest[s], m.threshold[s])) continue;
    m.spring_alive[s]                             = 0;
    m.slots[m.slot_a[s] * std::uint64_t{m.n} + a] = -1;
    m.slots[m.slot_b[s] * std::uint64_t{m.n} + b] = -1;
    // order: relaxed (a count, read by the host after the kernel)
    atomicAdd(&counters[0], 1ull);
  }
}

__global__ void base_bfs_init_kernel(MeshView m) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride())
    m.distance[i] = m.kind[i] == kAnchor ? 0u : kUnreached;
}

__global__ void base_bfs_visit_kernel(MeshView m, std::uint32_t d, unsigned* changed) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride()) {
    // order: relaxed (the previous round's kernel wrote d; this round's CASes only turn kUnreached
    // into d + 1)
    if (!m.node_alive[i] || *static_cast<volatile std::uint32_t*>(&m.distance[i]) != d) continue;
    for (int k = 0; k < kMaxDegree; ++k) {
      std::int32_t const s = m.slots[k * std::uint64_t{m.n} + i];
      if (s < 0) continue;
      // order: relaxed (the CAS claims a node for round d + 1; changed is read by the host after
      // the kernel)
      if (atomicCAS(&m.distance[other_end(m, s, i)], kUnreached, d + 1u) == kUnreached)
        atomicOr(changed, 1u);
    }
  }
}

__global__ void base_remove_springs_kernel(MeshView m, Counter* counters) {
  for (std::uint64_t s = thread_index(); s < m.s; s += thread_stride())
    if (m.spring_alive[s] &&
        (m.distance[m.a[s]] == kUnreached || m.distance[m.b[s]] == kUnreached)) {
      m.spring_alive[s] = 0;
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&counters[1], 1ull);
    }
}

__global__ void base_remove_nodes_kernel(MeshView m, Counter* counters) {
  for (std::uint64_t i = thread_index(); i < m.n; i += thread_stride())
    if (m.node_alive[i] && m.distance[i] == kUnreached) {
      m.node_alive[i] = 0;
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(&counters[2], 1ull);
    }
}

struct Phases {
  double force_ms = 0, move_ms = 0, break_ms = 0, bfs_ms = 0, remove_ms = 0;
  std::uint32_t bfs_rounds = 0;
  [[nodiscard]] double total() const { return force_ms + move_ms + break_ms + bfs_ms + remove_ms; }
  void add(Phases const& p) {
    force_ms += p.force_ms, move_ms += p.move_ms, break_ms += p.break_ms, bfs_ms += p.bfs_ms;
    remove_ms += p.remove_ms, bfs_rounds += p.bfs_rounds;
  }
};

/// Runs BFS rounds d = 0, 1, ... of `visit(d)` in batches until a batch claims no node.
template <class Visit>
std::uint32_t bfs_rounds(cudart::device_buffer<unsigned>& changed, cudaStream_t s, Visit visit) {
  std::uint32_t d = 0;
  for (;;) {
    changed.set_zero_async(s);
    for (int r = 0; r < kBfsBatch; ++r) visit(d++);
    if (cudart::value_to_host(changed.data(), s) == 0u) return d;
  }
}

/// The common part of every variant: counters and the changed flag.
class VariantBase {
 public:
  VariantBase() : counters_(3, "structure counters"), changed_(1, "structure bfs flag") {
    counters_.set_zero_async(nullptr);
    HEAPLAB_CUDA_TRY(cudaDeviceSynchronize());
  }
  Counters counters(cudaStream_t s) {
    std::vector<Counter> c(3);
    cudart::copy_to_host(c.data(), counters_.data(), 3, s);
    return {c[0], c[1], c[2]};
  }

 protected:
  cudart::device_buffer<Counter> counters_;
  cudart::device_buffer<unsigned> changed_;
};

/// Makes the mesh's Node and Spring objects on H (soa::Heap<Types>, or AnyHeap<Types, Allocator>
/// on another allocator) and links the nodes' spring lists; synchronizes H's stream. Returns the
/// number of makes that got null (0: every object made; no spring is made when a node failed).
template <class H>
Counter make_objects(H& heap, Mesh const& mesh) {
  using R               = std::decay_t<decltype(heap.ref())>;
  std::uint32_t const n = mesh.num_nodes(), s = mesh.num_springs();
  DeviceMesh dm(mesh);
  cudart::device_buffer<Node*> nodes(n, "structure node pointers");
  cudart::device_buffer<Spring*> springs(s, "structure spring pointers");
  cudart::device_buffer<Counter> failed(1, "structure failed makes");
  auto const st = heap.stream();
  failed.set_zero_async(st);
  make_nodes_kernel<R>
      <<<blocks_for(n), kThreads, 0, st>>>(heap.ref(), dm.view(), nodes.data(), failed.data());
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  if (Counter const f = cudart::value_to_host(failed.data(), st); f != 0) return f;
  make_springs_kernel<R><<<blocks_for(s), kThreads, 0, st>>>(
      heap.ref(), dm.view(), nodes.data(), springs.data(), failed.data());
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  if (Counter const f = cudart::value_to_host(failed.data(), st); f != 0) return f;
  link_kernel<<<blocks_for(n), kThreads, 0, st>>>(dm.view(), nodes.data(), springs.data());
  HEAPLAB_CUDA_TRY(cudaGetLastError());
  HEAPLAB_CUDA_TRY(cudaStreamSynchronize(st));
  return 0;
}

/// What the variants with Node and Spring objects share besides their heap H (soa::Heap<Types>,
/// or AnyHeap<Types, Allocator>): the iteration's Physics, the phases and the graph's download.
class ObjectVariant : public VariantBase {
 protected:
  ObjectVariant(Mesh const& mesh, Physics p, Loading loading)
      : base_(p),
        p_(physics_at(p, loading, 0)),
        loading_(loading),
        node_out_(mesh.num_nodes(), "structure node records"),
        spring_out_(mesh.num_springs(), "structure spring records"),
        count_(1, "structure record count") {}

  /// Iteration `it` (1-based) on H with physics_at(base, loading, it): the phases of the top of
  /// this file.
  template <class H>
  Phases step_on(H& heap, int it) {
    using R = std::decay_t<decltype(heap.ref())>;
    Phases r;
    p_            = physics_at(base_, loading_, it);
    auto const st = heap.stream();
    // No Node is created or destroyed from force to the BFS's last round: one enumeration of
    // Node serves every Node do-all of the iteration (Heap::Enumeration; its first use, in the
    // force phase, pays for it), the last one being the removal.
    std::optional<decltype(heap.template enumerate<Node>())> nodes;
    r.force_ms  = bench::time_once_ms([&] {
      nodes.emplace(heap.template enumerate<Node>());
      nodes->template parallel_do<&Node::compute_force>(p_);
    });
    r.move_ms   = bench::time_once_ms([&] { nodes->template parallel_do<&Node::move>(p_); });
    r.break_ms  = bench::time_once_ms([&] {
      heap.template parallel_do<Spring, &Spring::check_break<R>>(heap.ref(), counters_.data(), p_);
    });
    r.bfs_ms    = bench::time_once_ms([&] {
      nodes->template parallel_do<&Node::bfs_init>();
      r.bfs_rounds = bfs_rounds(changed_, st, [&](std::uint32_t d) {
        nodes->template parallel_do<&Node::bfs_visit>(d, changed_.data());
      });
    });
    r.remove_ms = bench::time_once_ms([&] {
      heap.template parallel_do<Spring, &Spring::remove_if_unreached<R>>(heap.ref(),
                                                                         counters_.data());
      nodes->template last_parallel_do<&Node::remove_if_unreached<R>>(heap.ref(), counters_.data());
    });
    return r;
  }

  /// H's live objects as a graph (names: the encoded object pointers), for --check.
  template <class H>
  Graph graph_of(H& heap) {
    Graph g;
    g.rest_scale  = p_.rest_scale;
    auto const st = heap.stream();
    count_.set_zero_async(st);
    heap.template parallel_do<Node, &Node::export_record>(node_out_.data(), count_.data());
    g.nodes.resize(cudart::value_to_host(count_.data(), st));
    cudart::copy_to_host(g.nodes.data(), node_out_.data(), g.nodes.size(), st);
    count_.set_zero_async(st);
    heap.template parallel_do<Spring, &Spring::export_record>(spring_out_.data(), count_.data());
    g.springs.resize(cudart::value_to_host(count_.data(), st));
    cudart::copy_to_host(g.springs.data(), spring_out_.data(), g.springs.size(), st);
    return g;
  }

 private:
  Physics base_, p_;
  Loading loading_;
  cudart::device_buffer<NodeRecord> node_out_;
  cudart::device_buffer<SpringRecord> spring_out_;
  cudart::device_buffer<Counter> count_;
};

class HeapVariant : public ObjectVariant {
 public:
  HeapVariant(StructureOptions const& o, Mesh const& mesh, Physics p, Loading loading)
      : ObjectVariant(mesh, p, loading),
        heap_(Heap::with_blocks(heap_blocks(o, mesh), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<Node>, Types::type_id<Spring>}) {
    require_fits("at set-up", make_objects(heap_, mesh));
    (void)graph();  // untimed: the first parallel_do allocates its scratch
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.num_blocks(); }

  /// OutOfMemory when a make found the heap full: `failed` of make_objects, or any request since
  /// the heap's construction (oom_count is cumulative; synchronizes). Only set-up makes objects.
  void require_fits(std::string const& where, Counter failed = 0) const {
    require_no_failed_allocations("structure",
                                  "heap",
                                  std::max<std::uint64_t>(failed, heap_.oom_count()),
                                  where,
                                  std::to_string(num_blocks()) + " blocks of " +
                                      std::to_string(Types::block_bytes) +
                                      " bytes; raise --heap-blocks or --memory-mib");
  }

  /// Iteration `it` (1-based) with physics_at(base, loading, it).
  Phases step(int it) { return step_on(heap_, it); }

  Counters counters() { return VariantBase::counters(heap_.stream()); }

  /// The defragmentation policy's turn after an iteration (CompactGpu sec. 3.7): Node and Spring
  /// objects move and the compactor rewrites the pointer fields between them (no external roots
  /// after set-up).
  void end_of_iteration(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }

  Graph graph() { return graph_of(heap_); }

  soa::HeapStatistics statistics() const { return heap_.statistics(); }
  check::HeapSnapshot snapshot() const { return heap_.snapshot(); }
  std::optional<std::string> device_errors() const { return heap_.device_errors(); }

 private:
  /// --heap-blocks, else --memory-mib's blocks, else room for the mesh twice over and 64.
  static std::uint32_t heap_blocks(StructureOptions const& o, Mesh const& m) {
    constexpr std::uint64_t cn = Types::capacity<Node>;
    constexpr std::uint64_t cs = Types::capacity<Spring>;
    std::uint64_t const b =
        2 * ((m.num_nodes() + cn - 1) / cn + (m.num_springs() + cs - 1) / cs) + 64;
    return heap_blocks_for(o.heap, Types::block_bytes, b, "structure");
  }

  Heap heap_;
  DefragLoop<Types> defrag_;
};

// ---------------------------------------------------------------- other allocators

/// The same app on another allocator (common/any_heap.cuh; DynaSOAr Fig. 10): Node and Spring
/// objects from Allocator's malloc, AOS, with the standalone do-all; the heap variant's phases.
template <class Allocator>
class AnyApp : public ObjectVariant {
 public:
  using AnyObjects = AnyHeap<Types, Allocator>;

  /// Room per type between two compactions. Every object is made at set-up and none afterwards
  /// (the app only destroys, DynaSOAr sec. 5 category 2), so a type never has more entries than
  /// its initial count: the larger of the two counts (one capacity for both types) cannot
  /// overflow, at any mesh size (<= 2^26 nodes, 3 springs per node: below AnyHeap's 2^31).
  static std::uint32_t max_objects(Mesh const& m) {
    return std::max(m.num_nodes(), m.num_springs());
  }

  /// The pool: --memory-mib's bytes, else every initial object twice over, each with 64 bytes
  /// more than its request (a grant that is not 64-byte aligned is asked again 63 bytes larger),
  /// and 64 MiB (CUDA's heap overhead on small meshes). The objects' bytes only shrink after
  /// set-up, so the initial mesh is the peak; twice over leaves the allocator's headers and size
  /// classes, and RW_malloc's random walks, a pool at most half full. 200 x 125 (the default and
  /// CompactGpu Fig. 12): 25,000 nodes (128-byte requests) and 74,351 springs (64-byte requests),
  /// about 91 MiB. reserve_cuda_malloc reserves this too (CUDA's heap is the pool).
  static std::uint64_t pool_bytes(StructureOptions const& o, Mesh const& m) {
    std::uint64_t const node   = AnyObjects::template request_bytes<Node>() + 64;
    std::uint64_t const spring = AnyObjects::template request_bytes<Spring>() + 64;
    return pool_bytes_for(o.heap,
                          2 * (m.num_nodes() * node + m.num_springs() * spring) + (64ull << 20));
  }

  /// `variant`: the allocator's name in --allocators / --only (the result lines').
  AnyApp(
      StructureOptions const& o, std::string variant, Mesh const& mesh, Physics p, Loading loading)
      : ObjectVariant(mesh, p, loading),
        variant_(std::move(variant)),
        pool_bytes_(pool_bytes(o, mesh)),
        heap_(pool_bytes_, max_objects(mesh)) {
    require_fits("at set-up", make_objects(heap_, mesh));
    (void)graph();  // untimed, as the heap variant's
  }

  /// OutOfMemory when a make got null: `failed` of make_objects, or any null since the heap's
  /// construction (nulls() is cumulative; synchronizes). Only set-up makes objects, never more
  /// than max_objects per type.
  void require_fits(std::string const& where, Counter failed = 0) const {
    require_no_failed_allocations(
        "structure",
        variant_.c_str(),
        std::max<std::uint64_t>(failed, heap_.nulls()),
        where,
        AnyObjects::allocator_name() + ", a " + std::to_string(pool_bytes_) + "-byte pool");
  }

  Phases step(int it) { return step_on(heap_, it); }
  Counters counters() { return VariantBase::counters(heap_.stream()); }
  Graph graph() { return graph_of(heap_); }
  AnyObjects& heap() { return heap_; }

 private:
  std::string variant_;
  std::uint64_t pool_bytes_;
  AnyObjects heap_;
};

template <class App>
struct is_any_app : std::false_type {};
template <class A>
struct is_any_app<AnyApp<A>> : std::true_type {};

class BaselineVariant : public VariantBase {
 public:
  BaselineVariant(Mesh const& mesh, Physics p, Loading loading)
      : base_(p), p_(physics_at(p, loading, 0)), loading_(loading), dm_(mesh), mesh_(mesh) {}

  /// Iteration `it` (1-based) with physics_at(base, loading, it).
  Phases step(int it) {
    Phases r;
    p_               = physics_at(base_, loading_, it);
    MeshView const m = dm_.view();
    auto launch      = [&](auto kernel, std::uint64_t n, auto... args) {
      kernel<<<blocks_for(n), kThreads>>>(m, args...);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
    };
    r.force_ms = bench::time_once_ms([&] { launch(base_force_kernel, m.n, p_); });
    r.move_ms  = bench::time_once_ms([&] { launch(base_move_kernel, m.n, p_); });
    r.break_ms = bench::time_once_ms([&] { launch(base_break_kernel, m.s, counters_.data(), p_); });
    r.bfs_ms   = bench::time_once_ms([&] {
      launch(base_bfs_init_kernel, m.n);
      r.bfs_rounds = bfs_rounds(changed_, nullptr, [&](std::uint32_t d) {
        launch(base_bfs_visit_kernel, m.n, d, changed_.data());
      });
    });
    r.remove_ms = bench::time_once_ms([&] {
      launch(base_remove_springs_kernel, m.s, counters_.data());
      launch(base_remove_nodes_kernel, m.n, counters_.data());
    });
    return r;
  }

  Counters counters() { return VariantBase::counters(nullptr); }

  /// Nothing to check: the baseline allocates nothing after its arrays (DeviceMesh::bytes).
  void require_fits(std::string const& /*where*/) const {}

  /// The arrays as a graph (names: index + 1), for --check.
  Graph graph() {
    MeshView const& m   = dm_.view();
    std::size_t const n = m.n, s = m.s;
    std::vector<float> x(n), y(n);
    std::vector<std::uint8_t> kind(n), alive(n), salive(s);
    std::vector<std::uint32_t> dist(n);
    std::vector<std::int32_t> slots(kMaxDegree * n);
    cudart::copy_to_host(x.data(), m.x, n);
    cudart::copy_to_host(y.data(), m.y, n);
    cudart::copy_to_host(kind.data(), m.kind, n);
    cudart::copy_to_host(alive.data(), m.node_alive, n);
    cudart::copy_to_host(dist.data(), m.distance, n);
    cudart::copy_to_host(slots.data(), m.slots, slots.size());
    cudart::copy_to_host(salive.data(), m.spring_alive, s);
    Graph g;
    g.rest_scale = p_.rest_scale;
    for (std::size_t i = 0; i < n; ++i) {
      if (!alive[i]) continue;
      NodeRecord r;
      r.self = i + 1, r.id = static_cast<std::uint32_t>(i), r.kind = kind[i], r.x = x[i];
      r.y = y[i], r.distance = dist[i];
      for (int k = 0; k < kMaxDegree; ++k) {
        std::int32_t const sp = slots[k * n + i];
        r.springs[k]          = sp < 0 ? 0u : static_cast<std::uint64_t>(sp) + 1u;
      }
      g.nodes.push_back(r);
    }
    for (std::size_t k = 0; k < s; ++k) {
      if (!salive[k]) continue;
      SpringRecord r;
      r.self = k + 1, r.id = static_cast<std::uint32_t>(k), r.a = mesh_.a[k] + 1u;
      r.b = mesh_.b[k] + 1u, r.rest = mesh_.rest[k], r.threshold = mesh_.threshold[k];
      g.springs.push_back(r);
    }
    return g;
  }

 private:
  Physics base_, p_;
  Loading loading_;
  DeviceMesh dm_;
  Mesh const& mesh_;
};

// ---------------------------------------------------------------- the run

struct Row {
  StepCounts counts;
  Phases phases;
};

bool check_due(StructureOptions const& o, int it) {
  return o.check && (it % o.check_every == 0 || it == o.iterations);
}

bool fail(char const* variant, int it, std::string const& what) {
  std::printf("structure --check FAILED at iteration %d (%s): %s\n", it, variant, what.c_str());
  return false;
}

bool check_common(
    char const* variant, Mesh const& mesh, Graph const& g, Counters const& c, int it) {
  if (auto v = check_graph(g)) return fail(variant, it, *v);
  if (auto v = check_counts(mesh, g, c)) return fail(variant, it, *v);
  return true;
}

bool check_heap(HeapVariant& app, Mesh const& mesh, int it) {
  Graph const g = app.graph();
  if (!check_common("heap", mesh, g, app.counters(), it)) return false;
  auto const stats            = app.statistics();
  std::uint64_t const live[2] = {g.nodes.size(), g.springs.size()};
  char const* names[2]        = {"Node", "Spring"};
  std::uint32_t const ids[2]  = {Types::type_id<Node>, Types::type_id<Spring>};
  for (int t = 0; t < 2; ++t)
    if (stats.types[ids[t]].used_slots != live[t])
      return fail("heap",
                  it,
                  std::string("heap holds ") + std::to_string(stats.types[ids[t]].used_slots) +
                      " live " + names[t] + " objects, the graph " + std::to_string(live[t]));
  if (auto e = app.device_errors()) return fail("heap", it, *e);
  auto const violations = check::check_all(app.snapshot());
  if (!violations.empty())
    return fail("heap",
                it,
                "invariant catalog: " + std::to_string(violations.size()) +
                    " violations, first: " + violations.front().to_string());
  return true;
}

void csv_row(
    std::FILE* csv, char const* variant, int it, Row const& r, soa::HeapStatistics const* stats) {
  if (csv == nullptr) return;
  std::fprintf(csv,
               "%s,%d,%llu,%llu,%llu,%llu",
               variant,
               it,
               static_cast<unsigned long long>(r.counts.nodes),
               static_cast<unsigned long long>(r.counts.springs),
               static_cast<unsigned long long>(r.counts.broken),
               static_cast<unsigned long long>(r.counts.removed));
  for (std::uint32_t t : {Types::type_id<Node>, Types::type_id<Spring>}) {
    if (stats == nullptr) {
      std::fprintf(csv, ",0,0,0.000000");
      continue;
    }
    auto const& ts = stats->types[t];
    std::fprintf(csv,
                 ",%llu,%llu,%.6f",
                 static_cast<unsigned long long>(ts.used_slots),
                 static_cast<unsigned long long>(ts.allocated_blocks),
                 ts.fragmentation);
  }
  auto const& p = r.phases;
  std::fprintf(csv,
               ",%.4f,%.4f,%.4f,%.4f,%.4f,%u\n",
               p.force_ms,
               p.move_ms,
               p.break_ms,
               p.bfs_ms,
               p.remove_ms,
               p.bfs_rounds);
}

/// "<variant>: final nodes N, springs S; broken B, removed nodes R, removed springs Q".
void print_final_counts(char const* variant, Mesh const& mesh, Counters const& c) {
  std::printf(
      "%s: final nodes %llu, springs %llu; broken %llu, removed nodes %llu, removed "
      "springs %llu\n",
      variant,
      static_cast<unsigned long long>(mesh.num_nodes() - c.removed_nodes),
      static_cast<unsigned long long>(mesh.num_springs() - c.broken_springs - c.removed_springs),
      static_cast<unsigned long long>(c.broken_springs),
      static_cast<unsigned long long>(c.removed_nodes),
      static_cast<unsigned long long>(c.removed_springs));
}

/// Runs one variant; fills `rows` (one per iteration); returns the total ms, negative when
/// --check failed.
template <class App>
double run_variant(char const* variant,
                   App& app,
                   StructureOptions const& o,
                   Mesh const& mesh,
                   std::FILE* csv,
                   std::vector<Row>& rows,
                   ProfileCsv& profile) {
  auto const check = [&](int it) {
    // A failed make is an OutOfMemory (exit 5), never a --check failure.
    app.require_fits("by iteration " + std::to_string(it));
    if constexpr (std::is_same_v<App, HeapVariant>)
      return check_heap(app, mesh, it);
    else
      return check_common(variant, mesh, app.graph(), app.counters(), it);
  };
  if (o.check && !check(0)) return -1;
  Phases total;
  Counters before{};
  for (int it = 1; it <= o.iterations; ++it) {
    Row r;
    r.phases = app.step(it);
    total.add(r.phases);
    Counters const c    = app.counters();
    r.counts.nodes      = mesh.num_nodes() - c.removed_nodes;
    r.counts.springs    = mesh.num_springs() - c.broken_springs - c.removed_springs;
    r.counts.broken     = c.broken_springs - before.broken_springs;
    r.counts.removed    = c.removed_nodes - before.removed_nodes;
    r.counts.bfs_rounds = r.phases.bfs_rounds;
    before              = c;
    rows.push_back(r);
    if constexpr (std::is_same_v<App, HeapVariant>) {
      IterationCost cost;
      cost.app_ms = r.phases.total();
      app.end_of_iteration(cost);
      if (profile.enabled())
        profile.write(variant, static_cast<std::uint64_t>(it), app.statistics(), cost);
    }
    if (check_due(o, it) && !check(it)) return -1;
    if constexpr (std::is_same_v<App, HeapVariant>) {
      if (csv != nullptr) {
        auto const stats = app.statistics();
        csv_row(csv, variant, it, r, &stats);
      }
    } else {
      csv_row(csv, variant, it, r, nullptr);
    }
  }
  app.require_fits("by the end of the run");  // before its result line
  std::printf(
      "%s: force %.3f ms, move %.3f ms, break %.3f ms, bfs %.3f ms (%u rounds), remove "
      "%.3f ms\n",
      variant,
      total.force_ms,
      total.move_ms,
      total.break_ms,
      total.bfs_ms,
      total.bfs_rounds,
      total.remove_ms);
  print_final_counts(variant, mesh, app.counters());
  if constexpr (std::is_same_v<App, HeapVariant>) {
    auto const stats = app.statistics();
    for (std::uint32_t t : {Types::type_id<Node>, Types::type_id<Spring>})
      std::printf("%s: %s live objects %llu in %llu blocks, F %.4f\n",
                  variant,
                  stats.types[t].name.c_str(),
                  static_cast<unsigned long long>(stats.types[t].used_slots),
                  static_cast<unsigned long long>(stats.types[t].allocated_blocks),
                  stats.types[t].fragmentation);
  }
  double ms = total.total();
  if constexpr (std::is_same_v<App, HeapVariant>) {
    if (auto const& d = app.defrag_total(); d.defrag_calls > 0) {
      std::printf("%s: defragmentation %s, %.1f%% of the iterations' time\n",
                  variant,
                  app.defrag_summary().c_str(),
                  100.0 * d.defrag_ms / std::max(ms, 1e-9));
      ms += d.defrag_ms;
    }
  }
  if constexpr (is_any_app<App>::value)
    app.heap().print_enumeration("structure", variant, app.heap().enumeration_ms(), ms);
  else
    print_result_line("structure", variant, ms, std::nullopt);
  std::printf("structure %s: %d iterations, %.3f ms\n", variant, o.iterations, ms);
  return ms;
}

Scenario scenario_of(StructureOptions const& o) {
  if (o.scenario == "pull") return Scenario::pull;
  if (o.scenario == "shrink") return Scenario::shrink;
  throw std::invalid_argument("structure: --scenario must be pull or shrink, not '" + o.scenario +
                              "'");
}

void validate(StructureOptions const& o) {
  if (o.iterations < 0) throw std::invalid_argument("structure: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("structure: --check-every must be >= 1");
  if (!(o.load >= 0.0f)) throw std::invalid_argument("structure: --load must be >= 0");
  (void)scenario_of(o);
  if (!(o.shrink >= 0.0f && o.shrink < 1.0f))
    throw std::invalid_argument("structure: --shrink must be in [0, 1)");
  if (!(o.shrink_floor > 0.0f && o.shrink_floor <= 1.0f))
    throw std::invalid_argument("structure: --shrink-floor must be in (0, 1]");
  apps::validate(o.heap);
  apps::validate_allocators(o.allocators);
}

/// The run's configuration, one line for the mesh and one for the heap.
void print_header(StructureOptions const& o, Mesh const& mesh, Loading const& loading) {
  std::printf(
      "structure: %ux%u mesh, %u nodes, %u springs, threshold %.4f +- %.0f%%, %s, "
      "seed %llu, %d iterations%s%s\n"
      "structure: heap: %s\n",
      o.width,
      o.height,
      mesh.num_nodes(),
      mesh.num_springs(),
      o.threshold,
      100.0 * o.jitter,
      loading.scenario == Scenario::pull
          ? ("scenario pull, load " + std::to_string(o.load)).c_str()
          : ("scenario shrink, " + std::to_string(o.shrink) + " per iteration down to " +
             std::to_string(o.shrink_floor))
                .c_str(),
      static_cast<unsigned long long>(o.seed),
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str(),
      describe(o.heap).c_str());
}

/// Whether `variant`'s counts equal the heap's at every iteration (the same arithmetic, model.hpp);
/// prints the first difference or that they agree. False for a difference under --check.
bool same_counts(StructureOptions const& o,
                 char const* variant,
                 std::vector<Row> const& heap_rows,
                 std::vector<Row> const& rows) {
  for (std::size_t i = 0; i < heap_rows.size(); ++i) {
    auto const& h = heap_rows[i].counts;
    auto const& b = rows[i].counts;
    if (h.nodes != b.nodes || h.springs != b.springs) {
      std::printf(
          "heap and %s counts differ at iteration %zu: nodes %llu / %llu, "
          "springs %llu / %llu\n",
          variant,
          i + 1,
          static_cast<unsigned long long>(h.nodes),
          static_cast<unsigned long long>(b.nodes),
          static_cast<unsigned long long>(h.springs),
          static_cast<unsigned long long>(b.springs));
      if (o.check)
        return fail(("heap vs " + std::string(variant)).c_str(),
                    static_cast<int>(i + 1),
                    "the same arithmetic must give the same counts");
      break;
    }
    if (i + 1 == heap_rows.size())
      std::printf("heap and %s counts: equal at every iteration\n", variant);
  }
  return true;
}

/// The app on each of --allocators after the heap variant (AnyApp), each compared with the heap
/// variant when it ran (heap_ms nullopt: --only); false when --check failed.
bool run_allocators(StructureOptions const& o,
                    Mesh const& mesh,
                    Physics p,
                    Loading const& loading,
                    std::FILE* csv,
                    std::optional<double> heap_ms,
                    std::vector<Row> const& heap_rows) {
  ProfileCsv no_profile;  // the memory profile is the soa heap's
  for (auto const& name : o.allocators) {
    std::vector<Row> rows;
    double ms = 0;
    with_allocator(name, [&](auto tag) {
      using App = AnyApp<typename decltype(tag)::type>;
      App app(o, name, mesh, p, loading);
      std::printf("%s: a %llu-byte pool, room for %u objects per type between compactions\n",
                  name.c_str(),
                  static_cast<unsigned long long>(App::pool_bytes(o, mesh)),
                  static_cast<unsigned>(App::max_objects(mesh)));
      ms = run_variant(name.c_str(), app, o, mesh, csv, rows, no_profile);
    });
    if (ms < 0) return false;
    if (!heap_ms) continue;
    print_heap_ratio("structure", name.c_str(), *heap_ms, ms);
    if (!same_counts(o, name.c_str(), heap_rows, rows)) return false;
  }
  return true;
}

/// The heap variant; its total ms (negative when --check failed).
double run_heap_variant(StructureOptions const& o,
                        Mesh const& mesh,
                        Physics p,
                        Loading const& loading,
                        std::FILE* csv,
                        std::vector<Row>& rows,
                        ProfileCsv& profile) {
  HeapVariant app(o, mesh, p, loading);
  std::printf("heap: %u blocks of %u bytes, %u nodes / %u springs per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Node>),
              static_cast<unsigned>(Types::capacity<Spring>));
  return run_variant("heap", app, o, mesh, csv, rows, profile);
}

/// The baseline: its object arrays against --memory-mib first (OutOfMemory when they exceed it),
/// then the run, compared with the heap variant when it ran (heap_ms nullopt: --only); false when
/// --check failed.
bool run_baseline(StructureOptions const& o,
                  Mesh const& mesh,
                  Physics p,
                  Loading const& loading,
                  std::FILE* csv,
                  std::optional<double> heap_ms,
                  std::vector<Row> const& heap_rows) {
  std::uint64_t const bytes = DeviceMesh::bytes(mesh);
  std::printf("baseline: object arrays %llu bytes\n", static_cast<unsigned long long>(bytes));
  require_baseline_fits(o.heap, "structure", bytes);
  ProfileCsv no_profile;  // the baseline has no heap
  std::vector<Row> rows;
  BaselineVariant base(mesh, p, loading);
  double const ms = run_variant("baseline", base, o, mesh, csv, rows, no_profile);
  if (ms < 0) return false;
  if (!heap_ms) return true;
  if (ms > 0) std::printf("heap / baseline: %.2fx (same run)\n", *heap_ms / ms);
  return same_counts(o, "baseline", heap_rows, rows);
}

}  // namespace

int run_structure(StructureOptions const& o) {
  validate(o);
  Loading loading;
  loading.scenario     = scenario_of(o);
  loading.shrink       = o.shrink;
  loading.shrink_floor = o.shrink_floor;
  Mesh const mesh = build_mesh(o.width, o.height, o.seed, o.threshold, o.jitter, loading.scenario);
  Physics p;
  p.load       = o.load;
  auto const d = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  print_header(o, mesh, loading);
  CsvFile const csv =
      open_csv(o.csv,
               "structure",
               "variant,iteration,nodes,springs,broken,removed,node_live_objects,node_allocated_"
               "blocks,node_fragmentation,spring_live_objects,spring_allocated_blocks,spring_"
               "fragmentation,force_ms,move_ms,break_ms,bfs_ms,remove_ms,bfs_rounds");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, "structure", Types::block_bytes);
  std::vector<Row> heap_rows;
  std::optional<double> heap_ms;  // nullopt: --only another variant
  // Before any kernel of this file runs (allocators.cuh): CUDA's heap is cuda-malloc's pool.
  reserve_cuda_malloc(o.allocators, AnyApp<malloc_family::CudaMallocAdapter>::pool_bytes(o, mesh));
  if (o.heap.run_heap) {
    heap_ms = run_heap_variant(o, mesh, p, loading, csv.get(), heap_rows, profile);
    if (*heap_ms < 0) return 1;
  }
  if (o.baseline && !run_baseline(o, mesh, p, loading, csv.get(), heap_ms, heap_rows)) return 1;
  if (!run_allocators(o, mesh, p, loading, csv.get(), heap_ms, heap_rows)) return 1;
  if (o.check) std::printf("structure --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::structure
