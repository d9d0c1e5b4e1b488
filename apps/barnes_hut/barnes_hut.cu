// `heaplab_apps barnes-hut` (barnes_hut.hpp; docs/apps.md "barnes-hut"): DynaSOAr Table 1's
// Barnes-Hut in 2D. Bodies (Body, allocated once) live in a quad tree of TreeNode objects that is
// deleted and built again every iteration on soa::Heap ("the running time is dominated by the
// construction/maintenance (i.e., frequent node inserts/removals) of the quad tree via parallel
// top-down/bottom-up tree traversals. Tree nodes are dynamically (de)allocated"). One iteration:
//
//   prune     parallel_do<TreeNode>: every node destroys itself; one thread makes a new root
//   top-down  rounds until no node splits: parallel_do<TreeNode> clear counts;
//             parallel_do<Body> count (relaxed atomicAdd on its leaf's count);
//             parallel_do<TreeNode> split (a leaf with more than kLeafCapacity bodies makes its 4
//             children); parallel_do<Body> descend (a body whose leaf split moves to its quadrant's
//             child)
//   link      parallel_do<Body>: push itself on its leaf's list (relaxed atomicExch on the list's
//             head) and add its mass and moments to the leaf (relaxed float atomicAdd)
//   bottom-up one parallel_do<TreeNode> per depth, deepest first: a node adds its count, mass and
//             moments to its parent's (relaxed atomicAdd)
//   force     parallel_do<Body>: a walk of the tree from the root with an explicit stack; a node
//             far enough (physics.hpp far_enough) counts as one mass
//   move      parallel_do<Body>: integrate, reflected at the root box's walls
//
// Memory orders: within a kernel a thread writes only its own object's fields, its own new
// children, or adds to a counter with an atomic (an order-independent sum but for the rounding of
// the float sums, which --check allows for); a node's children are read only in later kernels.
// Phases are separate kernels on one stream: a kernel boundary orders every write of a phase
// before the next reads it (the tree of an iteration is complete at the end of its last
// bottom-up kernel). No static baseline: category 4 (DynaSOAr sec. 6).
//
// Other allocators (--allocators; common/any_heap.cuh, DynaSOAr Fig. 10): the same classes and
// phases (Simulation<H>) run after the heap variant on AnyHeap<Types, Allocator>, whose do-all
// has soa::Heap's rule: a method may delete only its own object of the do-all's type. The one
// deletion is prune's of its own node; split makes TreeNodes during a TreeNode do-all, which
// neither heap visits (nor would split them: a new node counts 0 bodies). --check runs the same
// checks on every variant but the heap's own (live count, invariant catalog); the CSV and the
// memory profile are the heap variant's. AnyApp sizes its arrays and pool for the largest tree
// the bodies can make (max_tree_nodes), so that no tree can overflow them.
//
// The same memory for every variant (--memory-mib, common/memory_budget.hpp; DynaSOAr Fig. 11):
// the heap's blocks, each allocator's pool (no baseline). A make that answers nullptr is counted
// and leaves a null root or child: the phases skip it (a body whose quadrant's child is missing
// stays in its node), so nothing reads through it; the counts, read after set-up and after every
// iteration's build (before its --check), end the run with OutOfMemory.
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "barnes_hut.hpp"
#include "common/allocators.cuh"
#include "common/allocators.hpp"
#include "common/any_heap.cuh"
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
#include "common/heap_check.cuh"
#include "common/memory_budget.hpp"
#include "common/no_device.hpp"
#include "common/result_line.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
#include "heaplab/rw/page_pool.hpp"
#include "heaplab/soa/field.hpp"
#include "heaplab/soa/heap_types.hpp"
#include "physics.hpp"
#include "reference.hpp"
#include "timing.hpp"

namespace heaplab::apps::barnes_hut {

struct Types;
struct Board;
class TreeNode;

class Body {
 public:
  HEAPLAB_SOA_FIELDS(Body,
                     (float, x_),
                     (float, y_),
                     (float, vx_),
                     (float, vy_),
                     (float, fx_),
                     (float, fy_),
                     (float, mass_),
                     (TreeNode*, leaf_),
                     (Body*, next_));  // the next body of its leaf's list

  HEAPLAB_HD explicit Body(BodyInit const& b)
      : x_(b.x),
        y_(b.y),
        vx_(b.vx),
        vy_(b.vy),
        fx_(0.0f),
        fy_(0.0f),
        mass_(b.mass),
        leaf_(nullptr),
        next_(nullptr) {}

  __device__ void reset(Board b);
  __device__ void count(Board b);
  __device__ void descend(Board b);
  __device__ void link(Board b);
  __device__ void force(Board b);
  __device__ void move(Board b);
  __device__ void export_view(ExportSink<BodyView> out);
};

class TreeNode {
 public:
  HEAPLAB_SOA_FIELDS(TreeNode,
                     (float, cx_),
                     (float, cy_),
                     (float, half_),
                     (TreeNode*, parent_),
                     (TreeNode* [4], child_),
                     (Body*, first_),
                     (std::uint32_t, count_),
                     (std::uint32_t, depth_),
                     (float, mass_),
                     (float, mx_),
                     (float, my_));

  HEAPLAB_HD TreeNode(float cx, float cy, float half, TreeNode* parent, std::uint32_t depth)
      : cx_(cx),
        cy_(cy),
        half_(half),
        parent_(parent),
        first_(nullptr),
        count_(0u),
        depth_(depth),
        mass_(0.0f),
        mx_(0.0f),
        my_(0.0f) {
    for (int q = 0; q < 4; ++q) child_[q] = nullptr;
  }

  /// Ref: soa::HeapRef<Types>, or AnyHeapRef<Types, Allocator> on another allocator.
  template <class Ref>
  __device__ void prune(Ref heap);
  __device__ void clear_count() { count_ = 0u; }
  template <class Ref>
  __device__ void split(Ref heap, Board b);
  __device__ void push_up(std::uint32_t depth);
  __device__ void export_view(ExportSink<NodeView> out);
};

struct Types : soa::HeapTypes<Body, TreeNode> {};

/// The device view (trivially copyable, passed by value).
struct Board {
  Params p;
  TreeNode** root                   = nullptr;  // one slot: the current root
  unsigned* split                   = nullptr;  // set by a round that split a node
  unsigned long long* failed_allocs = nullptr;
};

__device__ void Body::reset(Board b) {
  leaf_ = *b.root;
  next_ = nullptr;
}

__device__ void Body::count(Board) {
  TreeNode* const l = leaf_;
  if (l == nullptr) return;  // the root's make answered nullptr (the run ends OutOfMemory)
  // order: relaxed (a count, read by the next kernel)
  atomicAdd(&l->count_, 1u);
}

__device__ void Body::descend(Board) {
  TreeNode* const l = leaf_;
  if (l == nullptr || l->child_[0] == nullptr) return;
  std::uint32_t const q = quadrant<kMutantQuadrantSwapsAxes>(l->cx_, l->cy_, x_, y_);
  TreeNode* const c     = l->child_[q];
  if (c != nullptr) leaf_ = c;  // nullptr: its make failed (the run ends OutOfMemory)
}

__device__ void Body::link(Board) {
  TreeNode* const l = leaf_;
  if (l == nullptr) return;  // the root's make answered nullptr (the run ends OutOfMemory)
  float const m = mass_, x = x_, y = y_;
  auto* const head = reinterpret_cast<unsigned long long*>(&l->first_);
  // order: relaxed (pushes this body on its leaf's list; the list is read by later kernels)
  unsigned long long const old =
      atomicExch(head, static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(this)));
  next_ = reinterpret_cast<Body*>(static_cast<std::uintptr_t>(old));
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&l->mass_, m);
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&l->mx_, m * x);
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&l->my_, m * y);
}

__device__ void Body::force(Board b) {
  float const x = x_, y = y_;
  float const eps = b.p.softening, theta = b.p.theta;
  float fx = 0.0f, fy = 0.0f;
  TreeNode* stack[kStack];
  int top      = 0;
  stack[top++] = *b.root;
  while (top > 0) {
    TreeNode* const n = stack[--top];
    if (n == nullptr || n->count_ == 0u) continue;  // nullptr: a failed make (OutOfMemory)
    if (n->child_[0] == nullptr) {
      for (Body* o = n->first_; o != nullptr; o = o->next_) {
        if (o == this) continue;
        float const ox = o->x_, oy = o->y_, om = o->mass_;
        add_pull<float>(x, y, ox, oy, om, eps, fx, fy);
      }
      continue;
    }
    float const m  = n->mass_;
    float const cx = n->mx_ / m, cy = n->my_ / m;
    float const d2 = (cx - x) * (cx - x) + (cy - y) * (cy - y);
    if (far_enough<float>(n->half_, d2, theta)) {
      add_pull<float>(x, y, cx, cy, m, eps, fx, fy);
    } else {
      for (int q = 0; q < 4; ++q) stack[top++] = n->child_[q];
    }
  }
  fx_ = b.p.gravity * mass_ * fx;
  fy_ = b.p.gravity * mass_ * fy;
}

__device__ void Body::move(Board b) {
  float x = x_, y = y_, vx = vx_, vy = vy_;
  integrate(x, y, vx, vy, fx_, fy_, mass_, b.p.dt);
  x_  = x;
  y_  = y;
  vx_ = vx;
  vy_ = vy;
}

__device__ void Body::export_view(ExportSink<BodyView> out) {
  if (BodyView* v = out.slot()) {
    v->handle = reinterpret_cast<std::uint64_t>(this);
    v->x      = x_;
    v->y      = y_;
    v->fx     = fx_;
    v->fy     = fy_;
    v->mass   = mass_;
    v->leaf   = reinterpret_cast<std::uint64_t>(static_cast<TreeNode*>(leaf_));
    v->next   = reinterpret_cast<std::uint64_t>(static_cast<Body*>(next_));
  }
}

template <class Ref>
__device__ void TreeNode::prune(Ref heap) {
  heap.destroy(this);
}

template <class Ref>
__device__ void TreeNode::split(Ref heap, Board b) {
  if (child_[0] != nullptr || count_ <= kLeafCapacity || depth_ >= kMaxDepth) return;
  float const cx = cx_, cy = cy_, h = half_;
  std::uint32_t const d = depth_;
  for (std::uint32_t q = 0; q < 4; ++q) {
    TreeNode* const c =
        heap.template make<TreeNode>(child_cx(cx, h, q), child_cy(cy, h, q), 0.5f * h, this, d + 1);
    if (c == nullptr) {
      // order: relaxed (a count, read by the host after the kernel)
      atomicAdd(b.failed_allocs, 1ull);
    }
    child_[q] = c;
  }
  // order: relaxed (a flag, read by the host after the kernel)
  atomicOr(b.split, 1u);
}

__device__ void TreeNode::push_up(std::uint32_t depth) {
  if (depth_ != depth) return;
  TreeNode* const p = parent_;
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&p->count_, static_cast<std::uint32_t>(count_));
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&p->mass_, static_cast<float>(mass_));
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&p->mx_, static_cast<float>(mx_));
  // order: relaxed (sums, read by later kernels)
  atomicAdd(&p->my_, static_cast<float>(my_));
}

__device__ void TreeNode::export_view(ExportSink<NodeView> out) {
  if (NodeView* v = out.slot()) {
    v->handle = reinterpret_cast<std::uint64_t>(this);
    v->cx     = cx_;
    v->cy     = cy_;
    v->half   = half_;
    v->parent = reinterpret_cast<std::uint64_t>(static_cast<TreeNode*>(parent_));
    for (int q = 0; q < 4; ++q)
      v->child[q] = reinterpret_cast<std::uint64_t>(static_cast<TreeNode*>(child_[q]));
    v->first = reinterpret_cast<std::uint64_t>(static_cast<Body*>(first_));
    v->count = count_;
    v->depth = depth_;
    v->mass  = mass_;
    v->mx    = mx_;
    v->my    = my_;
  }
}

namespace {

using Heap = soa::Heap<Types>;

template <class Ref>
__global__ void populate_kernel(Ref heap,
                                BodyInit const* init,
                                std::uint32_t n,
                                unsigned long long* failed) {
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    // order: relaxed (a count, read by the host after the kernel)
    if (heap.template make<Body>(init[i]) == nullptr) atomicAdd(failed, 1ull);
  }
}

template <class Ref>
__global__ void make_root_kernel(Ref heap, Board b) {
  if (thread_index() != 0) return;
  float const half  = kHalf;  // a value: make() takes its arguments by reference
  TreeNode* const r = heap.template make<TreeNode>(0.0f, 0.0f, half, nullptr, 0u);
  // order: relaxed (a count, read by the host after the kernel)
  if (r == nullptr) atomicAdd(b.failed_allocs, 1ull);
  *b.root = r;
}

struct Phases {
  double build_ms = 0, force_ms = 0, move_ms = 0;
  std::uint32_t rounds = 0;
  [[nodiscard]] double total() const { return build_ms + force_ms + move_ms; }
};

/// What every variant shares: the device board (the root's slot, the split flag, the failed
/// allocations), the bodies' creation and one iteration's do-alls (the top of this file), on H:
/// soa::Heap<Types>, or AnyHeap<Types, Allocator> on another allocator (common/any_heap.cuh).
template <class H>
class Simulation {
 public:
  using Ref = std::decay_t<decltype(std::declval<H&>().ref())>;

  /// make_heap() returns the heap as a prvalue (AnyHeap cannot be moved).
  template <class MakeHeap>
  Simulation(Params const& p, MakeHeap const& make_heap)
      : root_(1, "barnes-hut root"),
        split_(1, "barnes-hut split flag"),
        failed_(1, "barnes-hut failed allocations"),
        heap_(make_heap()) {
    b_.p             = p;
    b_.root          = root_.data();
    b_.split         = split_.data();
    b_.failed_allocs = failed_.data();
  }

  /// Creates the bodies; returns the allocations that failed (synchronizes).
  std::uint64_t populate(std::vector<BodyInit> const& init) {
    auto const s = heap_.stream();
    root_.set_zero_async(s);
    failed_.set_zero_async(s);
    cudart::device_buffer<BodyInit> d_init(init.size(), "barnes-hut initial bodies");
    cudart::copy_to_device_async(d_init.data(), init.data(), init.size(), s);
    populate_kernel<Ref><<<blocks_for(init.size()), kThreads, 0, s>>>(
        heap_.ref(), d_init.data(), b_.p.bodies, failed_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    return failed_allocations();
  }

  /// The tree of the bodies' positions and the forces on them.
  Phases build_and_force() {
    auto const s = heap_.stream();
    Phases ph;
    ph.build_ms = bench::time_once_ms([&] {
      heap_.template parallel_do<TreeNode, &TreeNode::prune<Ref>>(heap_.ref());
      make_root_kernel<Ref><<<1, 32, 0, s>>>(heap_.ref(), b_);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      heap_.template parallel_do<Body, &Body::reset>(b_);
      for (;;) {
        heap_.template parallel_do<TreeNode, &TreeNode::clear_count>();
        heap_.template parallel_do<Body, &Body::count>(b_);
        split_.set_zero_async(s);
        heap_.template parallel_do<TreeNode, &TreeNode::split<Ref>>(heap_.ref(), b_);
        ++ph.rounds;
        if (cudart::value_to_host(split_.data(), s) == 0 || ph.rounds > kMaxDepth) break;
        heap_.template parallel_do<Body, &Body::descend>(b_);
      }
      heap_.template parallel_do<Body, &Body::link>(b_);
      for (std::uint32_t d = ph.rounds - 1; d >= 1; --d)
        heap_.template parallel_do<TreeNode, &TreeNode::push_up>(d);
    });
    depth_      = ph.rounds - 1;
    ph.force_ms = bench::time_once_ms([&] { heap_.template parallel_do<Body, &Body::force>(b_); });
    return ph;
  }

  double move() {
    return bench::time_once_ms([&] { heap_.template parallel_do<Body, &Body::move>(b_); });
  }

  std::uint64_t failed_allocations() {
    return cudart::value_to_host(failed_.data(), heap_.stream());
  }
  std::vector<BodyView> bodies() {
    return export_objects<Body, &Body::export_view, BodyView>(heap_, "barnes-hut");
  }
  std::vector<NodeView> nodes() {
    return export_objects<TreeNode, &TreeNode::export_view, NodeView>(heap_, "barnes-hut");
  }
  [[nodiscard]] std::uint32_t depth() const { return depth_; }
  H& heap() { return heap_; }

 protected:
  cudart::device_buffer<TreeNode*> root_;
  cudart::device_buffer<unsigned> split_;
  cudart::device_buffer<unsigned long long> failed_;
  H heap_;
  Board b_;
  std::uint32_t depth_ = 0;
};

/// The heap app: bodies and tree nodes on soa::Heap.
class HeapApp : public Simulation<Heap> {
 public:
  HeapApp(BarnesHutOptions const& o, Params const& p, std::vector<BodyInit> const& init)
      : Simulation(
            p, [&] { return Heap::with_blocks(heap_blocks(o, p.bodies), heap_options(o.heap)); }),
        defrag_(heap_, o.heap, {Types::type_id<TreeNode>, Types::type_id<Body>}) {
    throw_if_failed(0, populate(init));
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(root_.data()), 1, Types::type_id<TreeNode>});
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.config().num_blocks; }
  void throw_on_failed_allocations(int iteration) {
    throw_if_failed(iteration, failed_allocations());
  }
  void end_of_iteration(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }
  soa::HeapStatistics statistics() const { return heap_.statistics(); }
  [[nodiscard]] std::uint64_t live_nodes() const {
    return heap_.statistics().types[Types::type_id<TreeNode>].used_slots;
  }

 private:
  /// OutOfMemory when a make answered nullptr so far: the app's count (every make site counts its
  /// null) or the heap's own (cumulative; it synchronizes).
  void throw_if_failed(int iteration, std::uint64_t failed) const {
    require_no_failed_allocations("barnes-hut",
                                  "heap",
                                  std::max(failed, heap_.oom_count()),
                                  at_step(iteration),
                                  std::to_string(num_blocks()) + " blocks of " +
                                      std::to_string(Types::block_bytes) + " bytes");
  }

  /// --heap-blocks, else --memory-mib's blocks, else the default (too large an error only where
  /// it is used).
  static std::uint32_t heap_blocks(BarnesHutOptions const& o, std::uint64_t n) {
    std::uint64_t const b = 2 * ((n + Types::capacity<Body> - 1) / Types::capacity<Body>)+8 *
                            ((n + Types::capacity<TreeNode> - 1) / Types::capacity<TreeNode>)+256;
    return heap_blocks_for(o.heap, Types::block_bytes, b, "barnes-hut");
  }

  DefragLoop<Types> defrag_;
};

// ------------------------------------------------------------------------ other allocators

/// The most tree nodes N bodies can make. A node splits only when it holds more than
/// kLeafCapacity bodies and lies above kMaxDepth, and the nodes of one depth hold disjoint sets of
/// bodies: at depth d < kMaxDepth at most min(4^d, N / (kLeafCapacity + 1)) nodes split, each
/// making 4 children; plus the root. 16,384 bodies: 136,501 (the measured trees have about 6,450,
/// 0.4 per body: docs/apps.md "barnes-hut"); 262,144 bodies: 1,951,509 (measured 98,781).
constexpr std::uint64_t max_tree_nodes(std::uint64_t bodies) {
  std::uint64_t splits = 0;
  std::uint64_t level  = 1;  // 4^d, capped at the bodies
  for (std::uint32_t d = 0; d < kMaxDepth; ++d) {
    splits += std::min(level, bodies / (kLeafCapacity + 1));
    level = std::min(4 * level, bodies);
  }
  return 1 + 4 * splits;
}

/// The same app on another allocator (common/any_heap.cuh; DynaSOAr Fig. 10): Body and TreeNode
/// objects from Allocator's malloc, AOS, with the standalone do-all.
template <class Allocator>
class AnyApp : public Simulation<AnyHeap<Types, Allocator>> {
 public:
  using AnyTree = AnyHeap<Types, Allocator>;
  using Base    = Simulation<AnyTree>;

  /// Entries per type between two compactions. objects[TreeNode] is compacted at each TreeNode
  /// do-all; between two, it holds at most the last tree and the new root (prune deletes the
  /// tree, make_root appends the root, clear_count compacts) or the tree being built (each
  /// round's split appends children; clear_count compacts): max_tree_nodes + 1, whatever the
  /// bodies' positions. objects[Body]: the bodies, never deleted. 24 bytes per entry (the two
  /// types' arrays and the compaction's output): 3.3 MB at 16,384 bodies.
  static std::uint32_t max_objects(std::uint32_t bodies) {
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(bodies, max_tree_nodes(bodies) + 1));
  }

  /// The pool: twice the bodies and the largest tree (max_tree_nodes), each object its request
  /// and 64 bytes more (a grant that is not 64-byte aligned is asked again 63 bytes larger), and
  /// 64 MiB: 124 MB at 16,384 bodies, 884 MB at 262,144. At most 16 GiB, rw-malloc's largest
  /// pool (2^30 pages of 16 bytes), reached above 6.2 million bodies: there the pool holds, twice
  /// over, trees 5 times the measured size (0.4 nodes per body) up to 2^24 bodies, not every tree
  /// the bound allows.
  /// With --memory-mib: its bytes instead (the same for every allocator and for CUDA's device
  /// malloc heap, which run_barnes_hut reserves before the first kernel).
  static std::uint64_t pool_bytes(BarnesHutOptions const& o, std::uint32_t bodies) {
    std::uint64_t const bytes =
        2 * (std::uint64_t{bodies} * (AnyTree::template request_bytes<Body>() + 64) +
             max_tree_nodes(bodies) * (AnyTree::template request_bytes<TreeNode>() + 64)) +
        (64ull << 20);
    return pool_bytes_for(
        o.heap,
        std::min(bytes, std::uint64_t{rw::kMaxPages} * malloc_family::RwMallocAdapter::kPageBytes));
  }

  AnyApp(BarnesHutOptions const& o, Params const& p, std::vector<BodyInit> const& init)
      : Base(p, [&] { return AnyTree(pool_bytes(o, p.bodies), max_objects(p.bodies)); }),
        pool_bytes_(pool_bytes(o, p.bodies)) {
    throw_if_failed(0, this->populate(init));
  }

  void throw_on_failed_allocations(int iteration) {
    throw_if_failed(iteration, this->failed_allocations());
  }
  std::uint64_t live_nodes() { return this->heap_.template live<TreeNode>(); }
  /// The enumeration time of the timed do-alls (the --check exports' left out).
  [[nodiscard]] double enumeration_ms() const { return this->heap_.enumeration_ms() - untimed_ms_; }
  std::vector<BodyView> bodies() {
    return untimed([&] { return Base::bodies(); });
  }
  std::vector<NodeView> nodes() {
    return untimed([&] { return Base::nodes(); });
  }

 private:
  template <class F>
  auto untimed(F const& f) {
    double const before = this->heap_.enumeration_ms();
    auto result         = f();
    untimed_ms_ += this->heap_.enumeration_ms() - before;
    return result;
  }

  /// OutOfMemory when a make answered nullptr so far: the app's count or the allocator's nulls
  /// (cumulative; synchronizes). A full object array is no lack of memory: AnyHeap's own error
  /// says so first.
  void throw_if_failed(int iteration, std::uint64_t failed) {
    std::uint64_t const nulls = this->heap_.nulls();
    if (failed == 0 && nulls == 0) return;
    // Throw AnyHeap's error if an object array overflowed.
    (void)this->heap_.template live<Body>();
    (void)this->heap_.template live<TreeNode>();
    std::string const name = AnyTree::allocator_name();
    require_no_failed_allocations("barnes-hut",
                                  name.c_str(),
                                  std::max(failed, nulls),
                                  at_step(iteration),
                                  std::to_string(nulls) + " nulls from the allocator, pool " +
                                      std::to_string(pool_bytes_) + " bytes");
  }

  std::uint64_t pool_bytes_ = 0;
  double untimed_ms_        = 0;
};

// ------------------------------------------------------------------------------------- runs

/// What a run compares between variants: the bodies at the end and the last tree's size.
struct Final {
  std::vector<BodyView> bodies;
  std::uint64_t nodes = 0;
  std::uint32_t depth = 0;
};

/// A run's options and outputs, shared by its variants.
struct Run {
  BarnesHutOptions const& o;
  Params const& p;
  double initial_mass = 0;
  std::FILE* csv      = nullptr;  // the heap variant's rows
  ProfileCsv& profile;            // the heap variant's
};

bool check_due(BarnesHutOptions const& o, int it) {
  return o.check && (it % o.check_every == 0 || it == o.iterations || it == 1);
}

/// --check of one variant after iteration it; `label` is "" for the heap, " (<allocator>)" else.
template <class App>
bool check(App& app, std::string const& label, Run const& r, int it) {
  auto const fail = [&](std::string const& what) {
    std::printf(
        "barnes-hut --check FAILED at iteration %d%s: %s\n", it, label.c_str(), what.c_str());
    return false;
  };
  std::vector<BodyView> const bodies = app.bodies();
  std::vector<NodeView> const nodes  = app.nodes();
  if (bodies.size() != r.p.bodies)
    return fail("the heap holds " + std::to_string(bodies.size()) + " bodies, the run has " +
                std::to_string(r.p.bodies));
  double mass = 0;
  for (BodyView const& b : bodies) mass += b.mass;
  if (mass != r.initial_mass) return fail("the bodies' total mass changed");
  if (auto v = check_tree(bodies, nodes)) return fail(*v);
  std::string report;
  if (auto v = check_forces(bodies, nodes, r.p, r.o.direct_sample, r.o.max_direct_error, &report))
    return fail(*v);
  if constexpr (std::is_same_v<App, HeapApp>) {
    if (auto v = heap_problem(app.heap(), bodies.size() + nodes.size())) return fail(*v);
  }
  std::printf("barnes-hut --check at iteration %d%s: %zu nodes, depth %u; %s\n",
              it,
              label.c_str(),
              nodes.size(),
              app.depth(),
              report.c_str());
  return true;
}

/// The iterations of one variant: their phase times summed, or nullopt when --check failed.
template <class App>
std::optional<Phases> iterate(Run const& r, std::string const& label, App& app) {
  constexpr bool is_heap = std::is_same_v<App, HeapApp>;
  Phases total;
  for (int it = 1; it <= r.o.iterations; ++it) {
    Phases ph = app.build_and_force();
    app.throw_on_failed_allocations(it);
    if (check_due(r.o, it) && !check(app, label, r, it)) return std::nullopt;
    ph.move_ms = app.move();
    IterationCost cost;
    cost.app_ms = ph.total();
    if constexpr (is_heap) app.end_of_iteration(cost);
    total.build_ms += ph.build_ms;
    total.force_ms += ph.force_ms;
    total.move_ms += ph.move_ms;
    if constexpr (is_heap) {
      if (r.profile.enabled()) r.profile.write("heap", it, app.statistics(), cost);
      if (r.csv != nullptr)
        std::fprintf(r.csv,
                     "%d,%llu,%u,%u,%.4f,%.4f,%.4f\n",
                     it,
                     static_cast<unsigned long long>(app.live_nodes()),
                     app.depth(),
                     ph.rounds,
                     ph.build_ms,
                     ph.force_ms,
                     ph.move_ms);
    }
  }
  return total;
}

/// Runs one variant ("heap" or an allocator's name); returns its time (ms, the heap's
/// defragmentation included), negative when --check failed. `final_state`, when given, gets the
/// bodies and the tree at the end.
template <class App>
double run_variant(Run const& r, char const* variant, App& app, Final* final_state) {
  constexpr bool is_heap           = std::is_same_v<App, HeapApp>;
  std::string const label          = is_heap ? std::string() : " (" + std::string(variant) + ")";
  std::optional<Phases> const done = iterate(r, label, app);
  if (!done) return -1;
  Phases const& total      = *done;
  std::string const prefix = std::string(variant) + ":";
  auto const nodes         = app.live_nodes();
  std::printf("%-9s %d iterations, build %.3f ms, force %.3f ms, move %.3f ms, total %.3f ms\n",
              prefix.c_str(),
              r.o.iterations,
              total.build_ms,
              total.force_ms,
              total.move_ms,
              total.total());
  double defrag_ms = 0;
  if constexpr (is_heap) {
    defrag_ms = app.defrag_total().defrag_ms;
    if (auto const& dt = app.defrag_total(); dt.defrag_calls > 0)
      std::printf("%-9s defragmentation %s\n", prefix.c_str(), app.defrag_summary().c_str());
  } else {
    app.heap().print_enumeration("barnes-hut", variant, app.enumeration_ms(), total.total());
  }
  std::printf("%-9s final tree %llu nodes, depth %u\n",
              prefix.c_str(),
              static_cast<unsigned long long>(nodes),
              app.depth());
  if (final_state != nullptr) *final_state = Final{app.bodies(), nodes, app.depth()};
  return total.total() + defrag_ms;
}

/// `barnes-hut heap / <variant>: R x (same run)` and how the final states compare: the bodies,
/// their total mass, the last tree, and the positions of the bodies matched by (mass, x, y) (a
/// body has no id). The tree's float sums are atomics in any order, so two runs are not
/// order-identical, not even two heap runs: a difference is reported, not failed (as nbody's).
void compare_with_heap(BarnesHutOptions const& o,
                       char const* variant,
                       double heap_ms,
                       double ms,
                       Final const& heap_final,
                       Final const& f) {
  constexpr double kTolerance = 1e-3;  // of a position, in the box [-1, 1)^2
  print_heap_ratio("barnes-hut", variant, heap_ms, ms);
  auto const sorted = [](std::vector<BodyView> v) {
    std::sort(v.begin(), v.end(), [](BodyView const& a, BodyView const& b) {
      return std::tie(a.mass, a.x, a.y) < std::tie(b.mass, b.x, b.y);
    });
    return v;
  };
  std::vector<BodyView> const a = sorted(heap_final.bodies);
  std::vector<BodyView> const b = sorted(f.bodies);
  double mass_a = 0, mass_b = 0, worst = 0;
  for (BodyView const& v : a) mass_a += v.mass;
  for (BodyView const& v : b) mass_b += v.mass;
  for (std::size_t i = 0; i < a.size() && a.size() == b.size(); ++i)
    worst = std::max({worst,
                      std::fabs(static_cast<double>(a[i].x) - b[i].x),
                      std::fabs(static_cast<double>(a[i].y) - b[i].y)});
  char positions[160];
  if (worst <= kTolerance)
    std::snprintf(positions,
                  sizeof positions,
                  "equal within %g (largest difference %.3g)",
                  kTolerance,
                  worst);
  else
    std::snprintf(positions,
                  sizeof positions,
                  "differ by up to %.3g (beyond %g: expected after many iterations, not "
                  "order-identical)",
                  worst,
                  kTolerance);
  std::printf(
      "barnes-hut heap vs %s after %d iterations: bodies %zu / %zu, total mass %s, tree %llu / "
      "%llu nodes, depth %u / %u; positions of the bodies matched by mass %s\n",
      variant,
      o.iterations,
      a.size(),
      b.size(),
      mass_a == mass_b ? "equal" : "differs",
      static_cast<unsigned long long>(heap_final.nodes),
      static_cast<unsigned long long>(f.nodes),
      heap_final.depth,
      f.depth,
      a.size() == b.size() ? positions : "not compared (other body counts)");
}

void validate(BarnesHutOptions const& o) {
  if (o.iterations < 0) throw std::invalid_argument("barnes-hut: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("barnes-hut: --check-every must be >= 1");
  if (!(o.theta >= 0.0f && o.theta <= 2.0f))
    throw std::invalid_argument("barnes-hut: --theta must be in [0, 2]");
  if (!(o.dt > 0.0f)) throw std::invalid_argument("barnes-hut: --dt must be > 0");
  apps::validate(o.heap);
  apps::validate_allocators(o.allocators);
}

/// Each allocator of --allocators after the heap variant: its run and the comparison (none when
/// `heap_ms` is nullopt: the heap did not run, --only). False when --check failed.
bool run_allocators(Run const& r,
                    std::vector<BodyInit> const& init,
                    std::optional<double> heap_ms,
                    Final const& heap_final) {
  for (auto const& name : r.o.allocators) {
    Final f;
    double ms = 0;
    with_allocator(name, [&](auto tag) {
      using App = AnyApp<typename decltype(tag)::type>;
      App app(r.o, r.p, init);
      std::printf("%-9s pool %.1f MiB, room for %u objects of each type between two compactions\n",
                  (name + ":").c_str(),
                  static_cast<double>(App::pool_bytes(r.o, r.p.bodies)) / (1 << 20),
                  App::max_objects(r.p.bodies));
      ms = run_variant(r, name.c_str(), app, heap_ms ? &f : nullptr);
    });
    if (ms < 0) return false;
    if (heap_ms) compare_with_heap(r.o, name.c_str(), *heap_ms, ms, heap_final, f);
  }
  return true;
}

/// The heap variant: its time (ms), negative when --check failed; `heap_final` gets its final
/// state when other allocators will be compared with it.
double run_heap(Run const& r, std::vector<BodyInit> const& init, Final& heap_final) {
  HeapApp app(r.o, r.p, init);
  std::printf("heap: %u blocks of %u bytes, %u Body or %u TreeNode objects per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Body>),
              static_cast<unsigned>(Types::capacity<TreeNode>));
  return run_variant(r, "heap", app, r.o.allocators.empty() ? nullptr : &heap_final);
}

}  // namespace

int run_barnes_hut(BarnesHutOptions const& o) {
  validate(o);
  Params p;
  p.bodies                         = o.bodies;
  p.seed                           = o.seed;
  p.theta                          = o.theta;
  p.dt                             = o.dt;
  std::vector<BodyInit> const init = initial_bodies(p);
  double initial_mass              = 0;
  for (BodyInit const& b : init) initial_mass += b.mass;
  auto const d = cudart::probe_device();
  if (!d.available) throw NoDevice(d.reason);
  std::printf("%s\n", cudart::device_line(d).c_str());
  std::printf(
      "barnes-hut: %u bodies, theta %.2f, dt %g, seed %llu, %d iterations%s%s\n"
      "barnes-hut: heap: %s\n",
      p.bodies,
      p.theta,
      p.dt,
      static_cast<unsigned long long>(p.seed),
      o.iterations,
      o.check ? (", --check every " + std::to_string(o.check_every)).c_str() : "",
      planted_bug_note(core::mutant::kPlanted).c_str(),
      describe(o.heap).c_str());
  CsvFile const csv =
      open_csv(o.csv, "barnes-hut", "iteration,nodes,depth,rounds,build_ms,force_ms,move_ms");
  ProfileCsv profile;
  if (!o.profile.empty()) profile = ProfileCsv(o.profile, "barnes-hut", Types::block_bytes);
  // Before any kernel of this file runs (allocators.cuh).
  reserve_cuda_malloc(o.allocators,
                      AnyApp<malloc_family::CudaMallocAdapter>::pool_bytes(o, p.bodies));
  Run const r{o, p, initial_mass, csv.get(), profile};
  Final heap_final;
  std::optional<double> heap_ms;
  if (o.heap.run_heap) {
    heap_ms = run_heap(r, init, heap_final);
    if (*heap_ms < 0) return 1;
    print_result_line("barnes-hut", "heap", *heap_ms, std::nullopt);  // no static baseline
  }
  if (!run_allocators(r, init, heap_ms, heap_final)) return 1;
  if (o.check) std::printf("barnes-hut --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::barnes_hut
