#include "reference.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace heaplab::apps::game_of_life {

char const* kind_name(Kind k) {
  switch (k) {
    case Kind::kEmpty:
      return "empty";
    case Kind::kAlive:
      return "Alive";
    case Kind::kCandidate:
      return "Candidate";
  }
  return "unknown";
}

namespace {

std::string at(Grid const& g, std::size_t i) {
  return "cell (" + std::to_string(i % g.width) + ", " + std::to_string(i / g.width) + ")";
}

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

std::optional<std::string> check_world(World const& w, Grid const& current, Grid const& previous) {
  std::size_t const n = std::size_t{w.width} * w.height;
  if (current.width != w.width || current.height != w.height || previous.width != w.width ||
      previous.height != w.height || current.cells.size() != n || previous.cells.size() != n ||
      w.handle.size() != n || w.kind.size() != n)
    throw std::invalid_argument("game-of-life: a world and grids of different sizes checked");
  // I4, the heap's side: objects unique, of a live kind, in the grid at their own cell.
  std::vector<ObjectView> objects = w.objects;
  std::sort(objects.begin(), objects.end(), [](ObjectView const& a, ObjectView const& b) {
    return a.handle < b.handle;
  });
  for (std::size_t k = 0; k < objects.size(); ++k) {
    ObjectView const& o = objects[k];
    if (k > 0 && objects[k - 1].handle == o.handle)
      return "object " + hex(o.handle) + " is reported twice by the heap";
    if (o.kind != Kind::kAlive && o.kind != Kind::kCandidate)
      return "object " + hex(o.handle) + " has no live kind";
    if (o.cell >= n)
      return std::string(kind_name(o.kind)) + " object " + hex(o.handle) + " names cell " +
             std::to_string(o.cell) + ", outside the " + std::to_string(n) + " cells";
    if (w.handle[o.cell] != o.handle)
      return std::string(kind_name(o.kind)) + " object " + hex(o.handle) + " of " +
             at(current, o.cell) + " is not in the grid (the grid holds " + hex(w.handle[o.cell]) +
             "): a leaked object";
  }
  for (std::size_t i = 0; i < n; ++i) {
    // I4, the grid's side: every pointer names a live object of this cell, of its kind.
    if (w.handle[i] != 0) {
      auto const it = std::lower_bound(
          objects.begin(), objects.end(), w.handle[i], [](ObjectView const& o, std::uint64_t h) {
            return o.handle < h;
          });
      if (it == objects.end() || it->handle != w.handle[i])
        return at(current, i) + " points at " + hex(w.handle[i]) + ", which is no live object";
      if (it->kind != w.kind[i])
        return at(current, i) + " holds a pointer of kind " + kind_name(w.kind[i]) + " to a " +
               kind_name(it->kind) + " object";
    } else if (w.kind[i] != Kind::kEmpty) {
      return at(current, i) + " is empty but of kind " + kind_name(w.kind[i]);
    }
    // I1: alive exactly where the reference is.
    bool const alive = current.cells[i] == kAlive;
    if (alive != (w.kind[i] == Kind::kAlive))
      return at(current, i) + ": reference " + (alive ? "alive" : "dead") + ", app " +
             kind_name(w.kind[i]);
    if (alive) continue;
    std::uint32_t const x   = static_cast<std::uint32_t>(i % w.width);
    std::uint32_t const y   = static_cast<std::uint32_t>(i / w.width);
    std::uint32_t const now = gen_ca::alive_neighbours(current, x, y);
    // I2: a dead cell with an alive neighbour is a candidate.
    if (now > 0 && w.kind[i] != Kind::kCandidate)
      return at(current, i) + " is dead with " + std::to_string(now) +
             " alive neighbour(s) but holds no Candidate (" + kind_name(w.kind[i]) +
             "): it could never be born";
    // I3: a candidate had a reason to be one, now or one generation ago.
    if (w.kind[i] == Kind::kCandidate && now == 0 && previous.cells[i] != kAlive &&
        gen_ca::alive_neighbours(previous, x, y) == 0)
      return at(current, i) +
             " holds a Candidate but had no alive neighbour in this or the "
             "previous generation and was not alive: a stale candidate";
  }
  return std::nullopt;
}

// ------------------------------------------------------------------------------------ the model

Model::Model(Grid const& initial, Rule const& rule, Bugs bugs)
    : rule_(rule), bugs_(bugs), width_(initial.width), height_(initial.height) {
  grid_.assign(initial.cells.size(), 0);
  std::vector<std::uint64_t> born;
  for (std::size_t i = 0; i < initial.cells.size(); ++i) {
    if (initial.cells[i] > kAlive)
      throw std::invalid_argument("game-of-life: the initial grid holds a dying cell");
    if (initial.cells[i] == kAlive) {
      grid_[i] = make(Kind::kAlive, static_cast<std::uint32_t>(i), true);
      born.push_back(grid_[i]);
    }
  }
  spread_candidates(born);
  publish();
}

std::uint64_t Model::make(Kind k, std::uint32_t cell, bool is_new) {
  objects_.push_back({k, cell, is_new, false, objects_.size() + 1});
  return objects_.back().handle;
}
void Model::destroy(std::uint64_t handle) { object(handle).kind = Kind::kEmpty; }
Model::Object& Model::object(std::uint64_t handle) { return objects_.at(handle - 1); }

std::uint32_t Model::neighbour(std::uint32_t cell, int dx, int dy) const {
  std::uint32_t const x  = cell % width_;
  std::uint32_t const y  = cell / width_;
  std::uint32_t const nx = (x + width_ + static_cast<std::uint32_t>(dx + 1) - 1u) % width_;
  std::uint32_t const ny = (y + height_ + static_cast<std::uint32_t>(dy + 1) - 1u) % height_;
  return ny * width_ + nx;
}

std::uint32_t Model::alive_neighbours(std::uint32_t cell) const {
  std::uint32_t n = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      if (dx == 0 && dy == 0) continue;
      std::uint64_t const h = grid_[neighbour(cell, dx, dy)];
      n += h != 0 && objects_[h - 1].kind == Kind::kAlive ? 1u : 0u;
    }
  return n;
}

// The new cells' candidates (Alive::update's second half): every empty neighbour gets one. The
// GPU app claims the cell with a compare-and-swap; without it (the planted bug) two new cells
// that both saw the cell empty both make one, and the later store hides the earlier object.
void Model::spread_candidates(std::vector<std::uint64_t> const& new_alive) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> claims;  // (cell, by) seen empty
  for (std::uint64_t h : new_alive) {
    object(h).is_new         = false;
    std::uint32_t const cell = object(h).cell;  // make() below may move the objects
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        if (bugs_.orthogonal_candidates && dx != 0 && dy != 0) continue;
        std::uint32_t const j = neighbour(cell, dx, dy);
        if (bugs_.candidate_without_cas) {
          if (grid_[j] == 0) claims.emplace_back(j, cell);
        } else if (grid_[j] == 0) {
          grid_[j] = make(Kind::kCandidate, j, false);
        }
      }
  }
  for (auto const& [j, by] : claims) grid_[j] = make(Kind::kCandidate, j, false);
}

void Model::step() {
  std::vector<std::uint64_t> alive, candidates;
  for (Object const& o : objects_) {
    if (o.kind == Kind::kAlive) alive.push_back(o.handle);
    if (o.kind == Kind::kCandidate) candidates.push_back(o.handle);
  }
  // Alive::prepare: a cell that does not survive will die.
  for (std::uint64_t h : alive) {
    Object& a = object(h);
    a.acts    = rule_.next(kAlive, alive_neighbours(a.cell)) != kAlive;
  }
  // Candidate::prepare: a candidate without alive neighbours is dropped; one whose count is in
  // the birth set will be born. Dropping changes no alive count, so the order does not matter.
  for (std::uint64_t h : candidates) {
    Object& c             = object(h);
    std::uint32_t const n = alive_neighbours(c.cell);
    if (n == 0) {
      grid_[c.cell] = 0;
      destroy(h);
    } else {
      c.acts = rule_.next(kDead, n) == kAlive;
    }
  }
  // Candidate::update: births.
  std::vector<std::uint64_t> born;
  for (std::uint64_t h : candidates) {
    Object& c = object(h);
    if (c.kind != Kind::kCandidate || !c.acts) continue;
    std::uint32_t const cell = c.cell;
    destroy(h);
    grid_[cell] = make(Kind::kAlive, cell, true);
    born.push_back(grid_[cell]);
  }
  // Alive::update: deaths leave a candidate behind; the new cells spread candidates.
  for (std::uint64_t h : alive) {
    Object& a = object(h);
    if (!a.acts) continue;
    std::uint32_t const cell = a.cell;
    destroy(h);
    grid_[cell] = make(Kind::kCandidate, cell, false);
  }
  spread_candidates(born);
  publish();
}

void Model::publish() {
  world_.width  = width_;
  world_.height = height_;
  world_.handle = grid_;
  world_.kind.assign(grid_.size(), Kind::kEmpty);
  for (std::size_t i = 0; i < grid_.size(); ++i)
    if (grid_[i] != 0) world_.kind[i] = objects_[grid_[i] - 1].kind;
  world_.objects.clear();
  for (Object const& o : objects_)
    if (o.kind != Kind::kEmpty) world_.objects.push_back({o.handle, o.kind, o.cell});
}

}  // namespace heaplab::apps::game_of_life
