// Schedule helpers: names, one-line descriptions, equality and validation (docs/schedules.md).
#include "heaplab/schedule/schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <utility>

#include "heaplab/core/enum_names.hpp"
#include "heaplab/core/hex.hpp"
#include "heaplab/schedule/text.hpp"

namespace heaplab::schedule {

namespace {

std::string compose(std::string const& source,
                    std::string const& path,
                    std::string const& reason,
                    std::size_t line,
                    std::size_t column) {
  std::string out;
  if (!source.empty()) {
    out += source;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += ": ";
  } else if (line > 0) {
    out += "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  }
  if (!path.empty()) out += path + ": ";
  // The file name, a key and a quoted value may come from a shared file: nothing of them may act
  // on the terminal the message is printed on.
  return terminal_safe(out + reason);
}

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest form that reads back to the same value.
  for (int precision = 1; precision <= 17; ++precision) {
    char shortest[64];
    std::snprintf(shortest, sizeof shortest, "%.*g", precision, v);
    if (std::strtod(shortest, nullptr) == v) return shortest;
  }
  return buf;
}

std::string type_name(core::HeapConfig const& config, std::uint32_t t) {
  if (t < config.num_types()) return config.types[t].name;
  return "<type " + std::to_string(t) + ">";
}

template <class E>
using NameTable = core::EnumName<E>;

constexpr NameTable<Divergence> kDivergenceNames[] = {
    {Divergence::all, "all"},
    {Divergence::alternate, "alternate"},
    {Divergence::random_mask, "random_mask"},
    {Divergence::per_lane_counts, "per_lane_counts"},
    {Divergence::mixed_types, "mixed_types"},
};
constexpr NameTable<SelectPattern> kSelectNames[] = {
    {SelectPattern::all, "all"},
    {SelectPattern::fraction, "fraction"},
    {SelectPattern::every_kth, "every_kth"},
};
constexpr NameTable<Action> kActionNames[] = {
    {Action::allocate_child, "allocate_child"},
    {Action::delete_self, "delete_self"},
    {Action::delete_other_type, "delete_other_type"},
    {Action::relink, "relink"},
};
constexpr NameTable<core::RewriteVariant> kVariantNames[] = {
    {core::RewriteVariant::forwarding, "forwarding"},
    {core::RewriteVariant::recompute_global, "recompute_global"},
    {core::RewriteVariant::recompute_shared, "recompute_shared"},
};

}  // namespace

schedule_error::schedule_error(
    std::string path, std::string reason, std::size_t line, std::size_t column, std::string source)
    : core::precondition_error(compose(source, path, reason, line, column)),
      path_(std::move(path)),
      reason_(std::move(reason)),
      line_(line),
      column_(column),
      source_(std::move(source)) {}

char const* to_string(Divergence d) { return core::name_of(kDivergenceNames, d); }
char const* to_string(SelectPattern p) { return core::name_of(kSelectNames, p); }
char const* to_string(Action a) { return core::name_of(kActionNames, a); }
char const* variant_name(core::RewriteVariant v) { return core::name_of(kVariantNames, v); }
std::optional<Divergence> divergence_from_string(std::string const& s) {
  return core::value_of(kDivergenceNames, s);
}
std::optional<SelectPattern> select_pattern_from_string(std::string const& s) {
  return core::value_of(kSelectNames, s);
}
std::optional<Action> action_from_string(std::string const& s) {
  return core::value_of(kActionNames, s);
}
std::optional<core::RewriteVariant> rewrite_variant_from_string(std::string const& s) {
  return core::value_of(kVariantNames, s);
}

char const* step_name(Step const& step) {
  struct Visitor {
    char const* operator()(AllocWave const&) const { return "alloc"; }
    char const* operator()(FreeWave const&) const { return "free"; }
    char const* operator()(ParallelDo const&) const { return "parallel_do"; }
    char const* operator()(Defrag const&) const { return "defrag"; }
    char const* operator()(Check const&) const { return "check"; }
  };
  return std::visit(Visitor{}, step);
}

std::string slot_name(core::HeapConfig const& config, std::uint32_t t, std::uint32_t slot) {
  if (t >= config.num_types()) return "<slot " + std::to_string(slot) + ">";
  auto const slots = config.pointer_slots(t);
  if (slot >= slots.size()) return type_name(config, t) + ".<slot " + std::to_string(slot) + ">";
  auto const& s     = slots[slot];
  auto const& field = config.types[s.declaring_type].pointer_fields[s.field];
  std::string out   = config.types[s.declaring_type].name + "." + field.name;
  if (field.count > 1) out += "[" + std::to_string(s.element) + "]";
  return out;
}

std::string describe(core::HeapConfig const& config, Step const& step) {
  std::ostringstream out;
  auto const tn = [&](std::uint32_t t) { return type_name(config, t); };
  if (auto const* a = std::get_if<AllocWave>(&step)) {
    out << "alloc";
    if (a->type) out << " " << tn(*a->type);
    out << " threads=" << a->threads;
    if (a->count) out << " count=" << *a->count;
    out << " divergence=" << to_string(a->divergence);
    if (a->divergence == Divergence::random_mask) out << "(seed=" << a->mask_seed << ")";
    if (a->divergence == Divergence::per_lane_counts) {
      out << "(";
      for (std::size_t i = 0; i < a->lane_counts.size(); ++i)
        out << (i ? "," : "") << a->lane_counts[i];
      out << ")";
    }
    if (a->divergence == Divergence::mixed_types) {
      out << "(";
      for (std::size_t i = 0; i < a->lane_types.size(); ++i)
        out << (i ? "," : "") << tn(a->lane_types[i]);
      out << ")";
    }
    for (auto const& l : a->links)
      out << " link[" << tn(l.type) << " slot " << l.slot << " = "
          << slot_name(config, l.type, l.slot) << " seed=" << l.seed
          << " null=" << fmt_double(l.null_fraction) << "]";
    if (a->roots) out << " roots";
  } else if (auto const* f = std::get_if<FreeWave>(&step)) {
    auto const& s = f->select;
    out << "free " << (s.type ? tn(*s.type) : std::string("any")) << " " << to_string(s.pattern);
    if (s.pattern == SelectPattern::fraction)
      out << "(" << fmt_double(s.fraction) << ", seed=" << s.seed << ")";
    if (s.pattern == SelectPattern::every_kth)
      out << "(k=" << s.k << ", offset=" << s.offset << ")";
  } else if (auto const* p = std::get_if<ParallelDo>(&step)) {
    out << "parallel_do<" << tn(p->type) << "> " << to_string(p->action);
    switch (p->action) {
      case Action::allocate_child:
        out << " " << tn(p->child_type) << " into " << slot_name(config, p->type, p->parent_slot);
        if (p->child_slot) out << ", back " << slot_name(config, p->child_type, *p->child_slot);
        break;
      case Action::delete_other_type:
        out << " victims " << tn(p->victim_type);
        break;
      case Action::relink:
        out << " " << slot_name(config, p->type, p->slot)
            << " null=" << fmt_double(p->null_fraction);
        break;
      case Action::delete_self:
        break;
    }
    out << " fraction=" << fmt_double(p->fraction) << " seed=" << p->seed;
  } else if (auto const* d = std::get_if<Defrag>(&step)) {
    out << "defrag " << tn(d->type) << " n="
        << (d->n ? std::to_string(*d->n) : std::to_string(config.defrag_factor) + "(config)")
        << " k1=" << (d->k1 ? std::to_string(*d->k1) : std::to_string(config.k1) + "(config)")
        << " variant=" << variant_name(d->variant);
    if (d->order != core::CandidateOrder::block_id) out << " order=" << core::to_string(d->order);
  } else if (auto const* c = std::get_if<Check>(&step)) {
    out << "check";
    if (c->graph_digest) out << " graph_digest=" << core::hex64(*c->graph_digest);
    if (c->snapshot_digest) out << " snapshot_digest=" << core::hex64(*c->snapshot_digest);
  }
  return out.str();
}

bool same_config(core::HeapConfig const& a, core::HeapConfig const& b) {
  if (a.num_blocks != b.num_blocks || a.defrag_factor != b.defrag_factor || a.k1 != b.k1 ||
      a.types.size() != b.types.size())
    return false;
  for (std::size_t t = 0; t < a.types.size(); ++t) {
    auto const& x = a.types[t];
    auto const& y = b.types[t];
    if (x.name != y.name || x.size_bytes != y.size_bytes || x.base != y.base ||
        x.is_abstract != y.is_abstract || x.pointer_fields.size() != y.pointer_fields.size())
      return false;
    for (std::size_t f = 0; f < x.pointer_fields.size(); ++f) {
      auto const& p = x.pointer_fields[f];
      auto const& q = y.pointer_fields[f];
      if (p.name != q.name || p.pointee != q.pointee || p.count != q.count) return false;
    }
  }
  return true;
}

bool operator==(Schedule const& a, Schedule const& b) {
  return same_config(a.config, b.config) && a.steps == b.steps && a.description == b.description;
}

// ------------------------------------------------------------------------------------ validate

namespace {

class Validator {
 public:
  explicit Validator(core::HeapConfig const& config) : config_(config) {}

  void config_limits() const {
    if (config_.num_blocks > kMaxBlocks)
      fail("config.num_blocks",
           "at most " + std::to_string(kMaxBlocks) + " blocks, got " +
               std::to_string(config_.num_blocks));
    for (std::size_t t = 0; t < config_.types.size(); ++t) {
      auto const& ty       = config_.types[t];
      std::string const tp = "config.types[" + std::to_string(t) + "]";
      if (ty.size_bytes > kMaxTypeSize)
        fail(tp + ".size",
             "at most " + std::to_string(kMaxTypeSize) + " bytes, got " +
                 std::to_string(ty.size_bytes));
      for (std::size_t f = 0; f < ty.pointer_fields.size(); ++f)
        if (ty.pointer_fields[f].count > kMaxPointerArray)
          fail(tp + ".pointers[" + std::to_string(f) + "].count",
               "at most " + std::to_string(kMaxPointerArray) + " elements, got " +
                   std::to_string(ty.pointer_fields[f].count));
    }
    try {
      config_.validate();
    } catch (core::precondition_error const& e) {
      fail("config", e.what());
    }
  }

  void step(std::string const& p, Step const& s) const {
    if (auto const* a = std::get_if<AllocWave>(&s)) alloc(p, *a);
    if (auto const* f = std::get_if<FreeWave>(&s)) free_wave(p, *f);
    if (auto const* d = std::get_if<ParallelDo>(&s)) parallel_do(p, *d);
    if (auto const* d = std::get_if<Defrag>(&s)) defrag(p, *d);
  }

 private:
  [[noreturn]] static void fail(std::string const& path, std::string const& reason) {
    throw schedule_error(path, reason);
  }

  void known_type(std::string const& path, std::uint32_t t) const {
    if (t >= config_.num_types())
      fail(path,
           "type index " + std::to_string(t) + " out of range (the config has " +
               std::to_string(config_.num_types()) + " types)");
  }
  void concrete_type(std::string const& path, std::uint32_t t) const {
    known_type(path, t);
    if (config_.types[t].is_abstract)
      fail(path, "type '" + config_.types[t].name + "' is abstract and cannot be allocated");
  }
  core::PointerSlot pointer_slot(std::string const& path,
                                 std::uint32_t t,
                                 std::uint32_t slot) const {
    auto const slots = config_.pointer_slots(t);
    if (slot >= slots.size())
      fail(path,
           "pointer slot " + std::to_string(slot) + " out of range: type '" +
               config_.types[t].name + "' has " + std::to_string(slots.size()) + " pointer slots");
    return slots[slot];
  }
  static void unit_interval(std::string const& path, double v) {
    if (!(v >= 0.0 && v <= 1.0)) fail(path, "must be in [0, 1], got " + fmt_double(v));
  }
  static void unused(std::string const& path, bool is_default, char const* when) {
    if (!is_default) fail(path, std::string("only meaningful for ") + when);
  }

  void alloc(std::string const& p, AllocWave const& a) const {
    bool const mixed = a.divergence == Divergence::mixed_types;
    if (mixed && a.type)
      fail(p + ".type", "must be absent for mixed_types (types come from the divergence)");
    if (!mixed && !a.type) fail(p + ".type", "missing (required unless divergence is mixed_types)");
    if (a.type) concrete_type(p + ".type", *a.type);
    if (a.threads < 1 || a.threads > kMaxThreads)
      fail(p + ".threads",
           "must be in [1, " + std::to_string(kMaxThreads) + "], got " + std::to_string(a.threads));
    bool const lanes = a.divergence == Divergence::per_lane_counts;
    if (lanes && a.count) fail(p + ".count", "must be absent for per_lane_counts");
    if (!lanes && !a.count)
      fail(p + ".count", "missing (required unless divergence is per_lane_counts)");
    if (a.count && *a.count > kMaxPerThread)
      fail(
          p + ".count",
          "must be in [0, " + std::to_string(kMaxPerThread) + "], got " + std::to_string(*a.count));
    std::string const dp = p + ".divergence";
    if (a.divergence != Divergence::random_mask)
      unused(dp + ".seed", a.mask_seed == 0, "random_mask");
    if (lanes) {
      if (a.lane_counts.size() != kWarpSize)
        fail(dp + ".counts",
             "needs exactly " + std::to_string(kWarpSize) + " entries (one per lane), got " +
                 std::to_string(a.lane_counts.size()));
      for (std::size_t i = 0; i < a.lane_counts.size(); ++i)
        if (a.lane_counts[i] > kMaxLaneCount)
          fail(dp + ".counts[" + std::to_string(i) + "]",
               "must be in [0, " + std::to_string(kMaxLaneCount) + "], got " +
                   std::to_string(a.lane_counts[i]));
    } else {
      unused(dp + ".counts", a.lane_counts.empty(), "per_lane_counts");
    }
    if (mixed) {
      if (a.lane_types.empty() || a.lane_types.size() > kWarpSize)
        fail(dp + ".types",
             "needs 1 to " + std::to_string(kWarpSize) + " types, got " +
                 std::to_string(a.lane_types.size()));
      for (std::size_t i = 0; i < a.lane_types.size(); ++i)
        concrete_type(dp + ".types[" + std::to_string(i) + "]", a.lane_types[i]);
    } else {
      unused(dp + ".types", a.lane_types.empty(), "mixed_types");
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
    for (std::size_t i = 0; i < a.links.size(); ++i) {
      auto const& l        = a.links[i];
      std::string const lp = p + ".links[" + std::to_string(i) + "]";
      known_type(lp + ".type", l.type);
      bool allocated_here = a.type == l.type;
      for (auto t : a.lane_types) allocated_here = allocated_here || t == l.type;
      if (!allocated_here)
        fail(lp + ".type",
             "type '" + config_.types[l.type].name + "' is not allocated by this wave");
      pointer_slot(lp + ".slot", l.type, l.slot);
      unit_interval(lp + ".null_fraction", l.null_fraction);
      if (!seen.insert({l.type, l.slot}).second)
        fail(lp, "a second link rule for slot " + slot_name(config_, l.type, l.slot));
    }
  }

  void free_wave(std::string const& p, FreeWave const& f) const {
    auto const& s        = f.select;
    std::string const sp = p + ".select";
    if (s.type) known_type(sp + ".type", *s.type);
    if (s.pattern == SelectPattern::fraction) {
      unit_interval(sp + ".fraction", s.fraction);
    } else {
      unused(sp + ".fraction", s.fraction == 0, "pattern fraction");
      unused(sp + ".seed", s.seed == 0, "pattern fraction");
    }
    if (s.pattern == SelectPattern::every_kth) {
      if (s.k < 1) fail(sp + ".k", "must be at least 1");
      if (s.offset >= s.k)
        fail(sp + ".offset",
             "must be below k=" + std::to_string(s.k) + ", got " + std::to_string(s.offset));
    } else {
      unused(sp + ".k", s.k == 1, "pattern every_kth");
      unused(sp + ".offset", s.offset == 0, "pattern every_kth");
    }
  }

  void parallel_do(std::string const& p, ParallelDo const& d) const {
    known_type(p + ".type", d.type);
    std::string const ap = p + ".action";
    unit_interval(ap + ".fraction", d.fraction);
    bool const child  = d.action == Action::allocate_child;
    bool const victim = d.action == Action::delete_other_type;
    bool const relink = d.action == Action::relink;
    if (child) {
      concrete_type(ap + ".child_type", d.child_type);
      auto const ps = pointer_slot(ap + ".parent_slot", d.type, d.parent_slot);
      if (!config_.is_subtype(d.child_type, ps.pointee))
        fail(ap + ".parent_slot",
             "slot " + slot_name(config_, d.type, d.parent_slot) + " points to '" +
                 config_.types[ps.pointee].name + "', which '" + config_.types[d.child_type].name +
                 "' is not a subtype of");
      if (d.child_slot) {
        auto const cs = pointer_slot(ap + ".child_slot", d.child_type, *d.child_slot);
        if (!config_.is_subtype(d.type, cs.pointee))
          fail(ap + ".child_slot",
               "slot " + slot_name(config_, d.child_type, *d.child_slot) + " points to '" +
                   config_.types[cs.pointee].name + "', which the parent type '" +
                   config_.types[d.type].name + "' is not a subtype of");
      }
    } else {
      unused(ap + ".child_type", d.child_type == 0, "allocate_child");
      unused(ap + ".parent_slot", d.parent_slot == 0, "allocate_child");
      unused(ap + ".child_slot", !d.child_slot, "allocate_child");
    }
    if (victim) {
      known_type(ap + ".victim_type", d.victim_type);
      if (config_.is_subtype(d.victim_type, d.type))
        fail(ap + ".victim_type",
             "'" + config_.types[d.victim_type].name + "' is '" + config_.types[d.type].name +
                 "' or one of its subtypes: a parallel_do may delete only `this` among the objects "
                 "it iterates (DynaSOAr sec. 2.1)");
    } else {
      unused(ap + ".victim_type", d.victim_type == 0, "delete_other_type");
    }
    if (relink) {
      pointer_slot(ap + ".slot", d.type, d.slot);
      unit_interval(ap + ".null_fraction", d.null_fraction);
    } else {
      unused(ap + ".slot", d.slot == 0, "relink");
      unused(ap + ".null_fraction", d.null_fraction == 0, "relink");
    }
  }

  void defrag(std::string const& p, Defrag const& d) const {
    concrete_type(p + ".type", d.type);
    if (d.n) {
      std::uint32_t const cap = config_.capacity(d.type);
      if (*d.n < 1 || *d.n >= cap)
        fail(p + ".n",
             "defragmentation factor must satisfy 1 <= n < " + std::to_string(cap) +
                 " (the block capacity of '" + config_.types[d.type].name +
                 "'; CompactGpu sec. 3), got " + std::to_string(*d.n));
    }
  }

  core::HeapConfig const& config_;
};

}  // namespace

std::uint64_t wave_requests(AllocWave const& wave) {
  std::uint64_t per_thread = wave.count.value_or(0);
  for (auto const c : wave.lane_counts) per_thread = std::max<std::uint64_t>(per_thread, c);
  return std::uint64_t{wave.threads} * per_thread;
}

namespace {

/// schedule_work's bound on live objects, stepped through the schedule; visit(f) calls
/// f(step index, the step's work) in order.
template <typename Visit>
void for_each_step_work(Schedule const& schedule, Visit&& visit) {
  std::uint64_t capacity = 0;
  for (std::uint32_t t = 0; t < schedule.config.types.size(); ++t)
    if (!schedule.config.types[t].is_abstract)
      capacity = std::max<std::uint64_t>(capacity, schedule.config.capacity(t));
  capacity *= schedule.config.num_blocks;
  std::uint64_t live = 0;  // the most objects that can be live before the step
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    Step const& step = schedule.steps[i];
    if (auto const* a = std::get_if<AllocWave>(&step)) {
      visit(i, wave_requests(*a));
      live = std::min(capacity, live + wave_requests(*a));
      continue;
    }
    visit(i, live);
    auto const* p = std::get_if<ParallelDo>(&step);
    if (p != nullptr && p->action == Action::allocate_child) live = std::min(capacity, 2 * live);
  }
}

std::string with_commas(std::uint64_t v) {
  std::string digits = std::to_string(v);
  for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

/// The work budget (kMaxWaveRequests, kMaxScheduleWork): the first step that passes either.
void check_work_budget(Schedule const& schedule) {
  std::uint64_t total = 0;
  for_each_step_work(schedule, [&](std::size_t i, std::uint64_t work) {
    std::string const path = "steps[" + std::to_string(i) + "]";
    auto const* a          = std::get_if<AllocWave>(&schedule.steps[i]);
    if (a != nullptr && work > kMaxWaveRequests)
      throw schedule_error(path,
                           "asks for up to " + with_commas(work) +
                               " allocations (threads x per-thread count); the work "
                               "budget is " +
                               with_commas(kMaxWaveRequests) +
                               " per wave (docs/schedules.md \"Limits\")");
    total += work;
    if (total > kMaxScheduleWork)
      throw schedule_error(path,
                           "brings the schedule's work to " + with_commas(total) +
                               " object visits; the work budget is " +
                               with_commas(kMaxScheduleWork) +
                               " per schedule (docs/schedules.md \"Limits\")");
  });
}

}  // namespace

std::uint64_t schedule_work(Schedule const& schedule) {
  std::uint64_t total = 0;
  for_each_step_work(schedule, [&](std::size_t, std::uint64_t work) { total += work; });
  return total;
}

void validate(Schedule const& schedule) {
  Validator const v(schedule.config);
  v.config_limits();
  if (schedule.steps.size() > kMaxStepsInFile)
    throw schedule_error("steps", "at most " + std::to_string(kMaxStepsInFile) + " steps");
  for (std::size_t i = 0; i < schedule.steps.size(); ++i)
    v.step("steps[" + std::to_string(i) + "]", schedule.steps[i]);
  check_work_budget(schedule);
}

}  // namespace heaplab::schedule
