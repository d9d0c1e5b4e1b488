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
#include "heaplab/soa/heap.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "barnes_hut.hpp"
#include "common/defrag_loop.cuh"
#include "common/grid.cuh"
#include "common/heap_check.cuh"
#include "common/no_device.hpp"
#include "heaplab/check/invariants.hpp"
#include "heaplab/cuda/copy.hpp"
#include "heaplab/cuda/device_buffer.hpp"
#include "heaplab/cuda/device_info.hpp"
#include "heaplab/cuda/error.hpp"
#include "heaplab/cuda/grid.hpp"
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

  __device__ void prune(soa::HeapRef<Types> heap);
  __device__ void clear_count() { count_ = 0u; }
  __device__ void split(soa::HeapRef<Types> heap, Board b);
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
  // order: relaxed (a count, read by the next kernel)
  atomicAdd(&l->count_, 1u);
}

__device__ void Body::descend(Board) {
  TreeNode* const l = leaf_;
  if (l->child_[0] == nullptr) return;
  std::uint32_t const q = quadrant<kMutantQuadrantSwapsAxes>(l->cx_, l->cy_, x_, y_);
  leaf_                 = l->child_[q];
}

__device__ void Body::link(Board) {
  TreeNode* const l = leaf_;
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
    if (n->count_ == 0u) continue;
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

__device__ void TreeNode::prune(soa::HeapRef<Types> heap) { heap.destroy(this); }

__device__ void TreeNode::split(soa::HeapRef<Types> heap, Board b) {
  if (child_[0] != nullptr || count_ <= kLeafCapacity || depth_ >= kMaxDepth) return;
  float const cx = cx_, cy = cy_, h = half_;
  std::uint32_t const d = depth_;
  for (std::uint32_t q = 0; q < 4; ++q) {
    TreeNode* const c =
        heap.make<TreeNode>(child_cx(cx, h, q), child_cy(cy, h, q), 0.5f * h, this, d + 1);
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
using Ref  = soa::HeapRef<Types>;

__global__ void populate_kernel(Ref heap,
                                BodyInit const* init,
                                std::uint32_t n,
                                unsigned long long* failed) {
  for (std::uint64_t i = thread_index(); i < n; i += thread_stride()) {
    // order: relaxed (a count, read by the host after the kernel)
    if (heap.make<Body>(init[i]) == nullptr) atomicAdd(failed, 1ull);
  }
}

__global__ void make_root_kernel(Ref heap, Board b) {
  if (thread_index() != 0) return;
  float const half  = kHalf;  // a value: make() takes its arguments by reference
  TreeNode* const r = heap.make<TreeNode>(0.0f, 0.0f, half, nullptr, 0u);
  // order: relaxed (a count, read by the host after the kernel)
  if (r == nullptr) atomicAdd(b.failed_allocs, 1ull);
  *b.root = r;
}

struct Phases {
  double build_ms = 0, force_ms = 0, move_ms = 0;
  std::uint32_t rounds = 0;
  [[nodiscard]] double total() const { return build_ms + force_ms + move_ms; }
};

class App {
 public:
  App(BarnesHutOptions const& o, Params const& p, std::vector<BodyInit> const& init)
      : root_(1, "barnes-hut root"),
        split_(1, "barnes-hut split flag"),
        failed_(1, "barnes-hut failed allocations"),
        heap_(Heap::with_blocks(heap_blocks(o, p.bodies), heap_options(o.heap))),
        defrag_(heap_, o.heap, {Types::type_id<TreeNode>, Types::type_id<Body>}) {
    auto const s     = heap_.stream();
    b_.p             = p;
    b_.root          = root_.data();
    b_.split         = split_.data();
    b_.failed_allocs = failed_.data();
    root_.set_zero_async(s);
    failed_.set_zero_async(s);
    cudart::device_buffer<BodyInit> d_init(init.size(), "barnes-hut initial bodies");
    cudart::copy_to_device_async(d_init.data(), init.data(), init.size(), s);
    populate_kernel<<<blocks_for(init.size()), kThreads, 0, s>>>(
        heap_.ref(), d_init.data(), p.bodies, failed_.data());
    HEAPLAB_CUDA_TRY(cudaGetLastError());
    throw_on_failed_allocations(0);
    defrag_.compactor().add_roots(
        {reinterpret_cast<std::uint64_t*>(root_.data()), 1, Types::type_id<TreeNode>});
  }

  [[nodiscard]] std::uint32_t num_blocks() const { return heap_.config().num_blocks; }

  /// The tree of the bodies' positions and the forces on them.
  Phases build_and_force() {
    auto const s = heap_.stream();
    Phases ph;
    ph.build_ms = bench::time_once_ms([&] {
      heap_.parallel_do<TreeNode, &TreeNode::prune>(heap_.ref());
      make_root_kernel<<<1, 32, 0, s>>>(heap_.ref(), b_);
      HEAPLAB_CUDA_TRY(cudaGetLastError());
      heap_.parallel_do<Body, &Body::reset>(b_);
      for (;;) {
        heap_.parallel_do<TreeNode, &TreeNode::clear_count>();
        heap_.parallel_do<Body, &Body::count>(b_);
        split_.set_zero_async(s);
        heap_.parallel_do<TreeNode, &TreeNode::split>(heap_.ref(), b_);
        ++ph.rounds;
        if (cudart::value_to_host(split_.data(), s) == 0 || ph.rounds > kMaxDepth) break;
        heap_.parallel_do<Body, &Body::descend>(b_);
      }
      heap_.parallel_do<Body, &Body::link>(b_);
      for (std::uint32_t d = ph.rounds - 1; d >= 1; --d)
        heap_.parallel_do<TreeNode, &TreeNode::push_up>(d);
    });
    depth_      = ph.rounds - 1;
    ph.force_ms = bench::time_once_ms([&] { heap_.parallel_do<Body, &Body::force>(b_); });
    return ph;
  }

  double move() {
    return bench::time_once_ms([&] { heap_.parallel_do<Body, &Body::move>(b_); });
  }

  void throw_on_failed_allocations(int iteration) {
    auto const failed = cudart::value_to_host(failed_.data(), heap_.stream());
    if (failed != 0)
      throw std::runtime_error("barnes-hut: iteration " + std::to_string(iteration) + ": " +
                               std::to_string(failed) +
                               " allocations found the heap full; raise --heap-blocks (now " +
                               std::to_string(num_blocks()) + ")");
  }

  std::vector<BodyView> bodies() {
    return export_objects<Body, &Body::export_view, BodyView>(heap_, "barnes-hut");
  }
  std::vector<NodeView> nodes() {
    return export_objects<TreeNode, &TreeNode::export_view, NodeView>(heap_, "barnes-hut");
  }
  [[nodiscard]] std::uint32_t depth() const { return depth_; }
  void end_of_iteration(IterationCost& cost) { (void)defrag_.end_of_iteration(cost); }
  [[nodiscard]] IterationCost const& defrag_total() const { return defrag_.total(); }
  [[nodiscard]] std::string defrag_summary() const { return defrag_.summary(); }
  soa::HeapStatistics statistics() const { return heap_.statistics(); }
  [[nodiscard]] std::uint64_t live_nodes() const {
    return heap_.statistics().types[Types::type_id<TreeNode>].used_slots;
  }
  [[nodiscard]] Heap const& heap() const { return heap_; }

 private:
  static std::uint32_t heap_blocks(BarnesHutOptions const& o, std::uint64_t n) {
    if (o.heap.heap_blocks != 0) return o.heap.heap_blocks;
    std::uint64_t const b = 2 * ((n + Types::capacity<Body> - 1) / Types::capacity<Body>)+8 *
                            ((n + Types::capacity<TreeNode> - 1) / Types::capacity<TreeNode>)+256;
    if (b > 0xFFFFFFFFull) throw std::invalid_argument("barnes-hut: too many bodies");
    return static_cast<std::uint32_t>(b);
  }

  cudart::device_buffer<TreeNode*> root_;
  cudart::device_buffer<unsigned> split_;
  cudart::device_buffer<unsigned long long> failed_;
  Heap heap_;
  DefragLoop<Types> defrag_;
  Board b_;
  std::uint32_t depth_ = 0;
};

bool check_due(BarnesHutOptions const& o, int it) {
  return o.check && (it % o.check_every == 0 || it == o.iterations || it == 1);
}

bool check(App& app, BarnesHutOptions const& o, Params const& p, double initial_mass, int it) {
  auto const fail = [&](std::string const& what) {
    std::printf("barnes-hut --check FAILED at iteration %d: %s\n", it, what.c_str());
    return false;
  };
  std::vector<BodyView> const bodies = app.bodies();
  std::vector<NodeView> const nodes  = app.nodes();
  if (bodies.size() != p.bodies)
    return fail("the heap holds " + std::to_string(bodies.size()) + " bodies, the run has " +
                std::to_string(p.bodies));
  double mass = 0;
  for (BodyView const& b : bodies) mass += b.mass;
  if (mass != initial_mass) return fail("the bodies' total mass changed");
  if (auto v = check_tree(bodies, nodes)) return fail(*v);
  std::string report;
  if (auto v = check_forces(bodies, nodes, p, o.direct_sample, o.max_direct_error, &report))
    return fail(*v);
  if (auto v = heap_problem(app.heap(), bodies.size() + nodes.size())) return fail(*v);
  std::printf("barnes-hut --check at iteration %d: %zu nodes, depth %u; %s\n",
              it,
              nodes.size(),
              app.depth(),
              report.c_str());
  return true;
}

}  // namespace

int run_barnes_hut(BarnesHutOptions const& o) {
  if (o.iterations < 0) throw std::invalid_argument("barnes-hut: --iterations must be >= 0");
  if (o.check_every < 1) throw std::invalid_argument("barnes-hut: --check-every must be >= 1");
  if (!(o.theta >= 0.0f && o.theta <= 2.0f))
    throw std::invalid_argument("barnes-hut: --theta must be in [0, 2]");
  if (!(o.dt > 0.0f)) throw std::invalid_argument("barnes-hut: --dt must be > 0");
  apps::validate(o.heap);
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
  App app(o, p, init);
  std::printf("heap: %u blocks of %u bytes, %u Body or %u TreeNode objects per block\n",
              app.num_blocks(),
              static_cast<unsigned>(Types::block_bytes),
              static_cast<unsigned>(Types::capacity<Body>),
              static_cast<unsigned>(Types::capacity<TreeNode>));
  Phases total;
  for (int it = 1; it <= o.iterations; ++it) {
    Phases ph = app.build_and_force();
    app.throw_on_failed_allocations(it);
    if (check_due(o, it) && !check(app, o, p, initial_mass, it)) return 1;
    ph.move_ms = app.move();
    IterationCost cost;
    cost.app_ms = ph.total();
    app.end_of_iteration(cost);
    total.build_ms += ph.build_ms;
    total.force_ms += ph.force_ms;
    total.move_ms += ph.move_ms;
    if (profile.enabled()) profile.write("heap", it, app.statistics(), cost);
    if (csv.get() != nullptr)
      std::fprintf(csv.get(),
                   "%d,%llu,%u,%u,%.4f,%.4f,%.4f\n",
                   it,
                   static_cast<unsigned long long>(app.live_nodes()),
                   app.depth(),
                   ph.rounds,
                   ph.build_ms,
                   ph.force_ms,
                   ph.move_ms);
  }
  auto const nodes = app.live_nodes();
  std::printf(
      "heap:     %d iterations, build %.3f ms, force %.3f ms, move %.3f ms, total %.3f ms\n",
      o.iterations,
      total.build_ms,
      total.force_ms,
      total.move_ms,
      total.total());
  if (auto const& dt = app.defrag_total(); dt.defrag_calls > 0)
    std::printf("heap:     defragmentation %s\n", app.defrag_summary().c_str());
  std::printf("heap:     final tree %llu nodes, depth %u\n",
              static_cast<unsigned long long>(nodes),
              app.depth());
  if (o.check) std::printf("barnes-hut --check passed\n");
  return 0;
}

}  // namespace heaplab::apps::barnes_hut
