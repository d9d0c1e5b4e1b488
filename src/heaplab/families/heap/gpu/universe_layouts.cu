// The "head8", "head16" and "head32" universes (universes.cuh): objects that do not start with
// the 8-byte id (a leading field of 1, 2 or 4 bytes), inheritance three levels deep, pointer
// fields after narrower fields.
#include "heaplab/families/heap/gpu/detail/universe_entry.cuh"
#include "heaplab/families/heap/gpu/universes.cuh"

namespace heaplab::heap_family::gpu::detail {

namespace {
template <class Types>
UniverseEntry layout_entry(char const* name, char const* head) {
  return make_entry<Types>(
      name,
      std::string("A (u16, A*), B (: A; u32, B*[3]), C (: B; u8, A*), D (u8[3], "
                  "C*, u64[2]) under a hidden root whose first field is ") +
          head + ", then the id and the cookie: no object starts with its id",
      &gpu_sized_map<Types>);
}
}  // namespace

UniverseEntry head8_universe() {
  return layout_entry<universe_types::head8::Types>("head8", "a u8");
}
UniverseEntry head16_universe() {
  return layout_entry<universe_types::head16::Types>("head16", "a u16");
}
UniverseEntry head32_universe() {
  return layout_entry<universe_types::head32::Types>("head32", "a u32");
}

}  // namespace heaplab::heap_family::gpu::detail
