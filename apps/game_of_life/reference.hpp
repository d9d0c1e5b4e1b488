// game-of-life in DynaSOAr's form (docs/apps.md "game-of-life"): the CPU side. The dense
// reference is gen-ca's (a Life-like rule "S/B/2" stepped on a torus, gen_ca/reference.hpp); this
// file adds what the object form must satisfy on top of it, the checker --check runs on the GPU
// app's state, and a sequential model of the GPU app's four phases (the tests run the checker on
// it, with and without the planted bugs). Plain C++17, host only.
//
// The object form (DynaSOAr Table 1 "game-of-life"): a cell is dead, alive, or an
// alive-candidate (a dead cell that may be born in the next generation). Alive cells and
// candidates are heap objects (Alive, Candidate); a dense grid holds each cell's object pointer
// (empty: a dead cell that is not a candidate). Only alive cells and candidates are visited, so a
// generation costs O(alive cells), not O(cells). Invariants after every generation g (state S_g,
// previous state S_{g-1}; S_{-1} = S_0):
//   I1  the alive cells of the grid are exactly the reference's alive cells of S_g;
//   I2  every dead cell with an alive neighbour in S_g holds a candidate (nothing can be born
//       where no candidate is);
//   I3  a candidate is a dead cell that has an alive neighbour in S_g or in S_{g-1}, or was alive
//       in S_{g-1} (candidates are dropped lazily, one generation late);
//   I4  the grid and the heap name the same objects: every live object is in the grid at its own
//       cell, every grid pointer names a live object of that cell, no object twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gen_ca/reference.hpp"
#include "gen_ca/rule.hpp"

namespace heaplab::apps::game_of_life {

using gen_ca::Grid;
using gen_ca::kAlive;
using gen_ca::kDead;
using gen_ca::Rule;

/// What a grid entry or an object is.
enum class Kind : std::uint8_t { kEmpty = 0, kAlive = 1, kCandidate = 2 };
char const* kind_name(Kind k);

/// One live heap object as the app reports it.
struct ObjectView {
  std::uint64_t handle = 0;  // its pointer (any unique non-zero value in the model)
  Kind kind            = Kind::kEmpty;
  std::uint32_t cell   = 0;  // the cell it says it is in
};

/// The app's state: the grid (per cell a handle, 0 when empty, and its kind) and the heap's
/// live objects.
struct World {
  std::uint32_t width  = 0;
  std::uint32_t height = 0;
  std::vector<std::uint64_t> handle;  // per cell; 0: empty
  std::vector<Kind> kind;             // per cell, from the handle's type
  std::vector<ObjectView> objects;
};

/// The first violation of I1-I4 for `world` after a generation whose reference state is
/// `current` and whose previous state is `previous` (at generation 0 both are the initial grid),
/// as one sentence naming the cell; nullopt when all hold. Throws std::invalid_argument when the
/// sizes differ.
std::optional<std::string> check_world(World const& world,
                                       Grid const& current,
                                       Grid const& previous);

/// The planted bugs of the GPU app (docs/mutants.md "Applications"), for the model.
struct Bugs {
  bool orthogonal_candidates = false;  // game_of_life_orthogonal_candidates
  bool candidate_without_cas = false;  // game_of_life_candidate_without_cas (every racing pair
                                       // of new cells interleaves at its worst)
};

/// A sequential model of the GPU app (game_of_life.cu): the same objects, the same four phases
/// and the same decisions, with handles counted up from 1.
class Model {
 public:
  /// The initial world: an Alive for every alive cell of `initial`, then the candidates around
  /// them (the app's populate and seed kernels). `initial` must hold only states 0 and 1.
  Model(Grid const& initial, Rule const& rule, Bugs bugs = {});
  /// One generation: Alive::prepare, Candidate::prepare, Candidate::update, Alive::update.
  void step();
  [[nodiscard]] World const& world() const { return world_; }

 private:
  struct Object {
    Kind kind            = Kind::kEmpty;
    std::uint32_t cell   = 0;
    bool is_new          = false;  // Alive: born this generation (its candidates are not made)
    bool acts            = false;  // Alive: dies; Candidate: is born
    std::uint64_t handle = 0;
  };
  std::uint64_t make(Kind k, std::uint32_t cell, bool is_new);
  void destroy(std::uint64_t handle);
  Object& object(std::uint64_t handle);
  [[nodiscard]] std::uint32_t alive_neighbours(std::uint32_t cell) const;
  [[nodiscard]] std::uint32_t neighbour(std::uint32_t cell, int dx, int dy) const;
  void spread_candidates(std::vector<std::uint64_t> const& new_alive);
  void publish();

  Rule rule_;
  Bugs bugs_;
  std::uint32_t width_  = 0;
  std::uint32_t height_ = 0;
  std::vector<std::uint64_t> grid_;  // handle per cell, 0 empty
  std::vector<Object> objects_;      // index handle - 1; kind kEmpty: destroyed
  World world_;
};

}  // namespace heaplab::apps::game_of_life
