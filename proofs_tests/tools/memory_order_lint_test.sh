#!/usr/bin/env bash
# tools/check-memory-orders against planted sources: an unpaired relaxed load, a missing release,
# an unannotated atomic, an annotation that contradicts the code and weakened orders in copies of
# the real kernels must each be reported with file and line; a clean planted file and the real
# repository must pass.
#   memory_order_lint_test.sh SOURCE_DIR
set -uo pipefail
src="$1"
check="$src/tools/check-memory-orders"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
expect() {  # expect STATUS PATTERN what: the last run's exit status and output
  local want=$1 pattern=$2 what=$3
  if [ "$status" -ne "$want" ] || ! grep -E "$pattern" "$tmp/out" > /dev/null; then
    echo "FAIL: $what (exit $status, wanted $want and /$pattern/):"
    cat "$tmp/out"
    failed=1
  else
    echo "ok: $what"
  fi
}
run() {  # run FILE...: the checker on these files
  "$check" --files "$@" > "$tmp/out" 2>&1
  status=$?
}

"$check" "$src" > "$tmp/out" 2>&1
status=$?
expect 0 "every memory-ordering site" "the repository itself"

# A flag published with a release fence and read with an acquire load, counters relaxed: clean.
cat > "$tmp/clean.cu" << 'EOF'
__device__ void publish(Report* r, unsigned* ready, unsigned long long* n) {
  r->value = 1;
  // order: release [report] (the report before ready)
  __threadfence();
  atomicExch(ready, 1u);  // order: relaxed (ordered by the fence before it)
  atomicAdd(n, 1ull);     // order: relaxed (a count, read after the kernel)
  core::DeviceAtomics::store(flag, 1u, core::MemoryOrder::relaxed);
}
__device__ unsigned consume(unsigned const* ready) {
  // order: acquire [report] (the report after ready)
  return cuda::atomic_ref<unsigned const, cuda::thread_scope_device>(*ready).load(
      cuda::memory_order_acquire);
}
EOF
run "$tmp/clean.cu"
expect 0 "names its order; 1 tags paired" "a clean planted file"

# An unpaired relaxed load: it claims to consume the report but orders nothing.
cat > "$tmp/relaxed.cu" << 'EOF'
__device__ void publish(unsigned* ready) {
  // order: release [report] (the report before ready)
  core::DeviceAtomics::store(ready, 1u, core::MemoryOrder::release);
}
__device__ unsigned consume(unsigned const* ready) {
  // order: relaxed [report]
  return core::DeviceAtomics::load(ready, core::MemoryOrder::relaxed);
}
EOF
run "$tmp/relaxed.cu"
expect 1 "relaxed.cu:7: relaxed atomic operation names \[report\]: unpaired" \
  "planted: an unpaired relaxed load"

# A missing release: the acquire side is there, the publishing side is not.
cat > "$tmp/norelease.cu" << 'EOF'
__device__ void publish(Report* r, unsigned* ready) {
  r->value = 1;
  atomicExch(ready, 1u);  // order: relaxed (nothing orders the report before it)
}
__device__ unsigned consume(unsigned const* ready) {
  // order: acquire [report] (the report after ready)
  return core::DeviceAtomics::load(ready, core::MemoryOrder::acquire);
}
EOF
run "$tmp/norelease.cu"
expect 1 "norelease.cu:6: \[report\] is acquired but never released \(missing release\)" \
  "planted: a missing release"

# A load weakened in the code while its annotation still says acquire.
sed 's/MemoryOrder::acquire/MemoryOrder::relaxed/' "$tmp/norelease.cu" > "$tmp/weakened.cu"
run "$tmp/weakened.cu"
expect 1 "weakened.cu:7: atomic operation uses relaxed, annotated acquire" \
  "planted: an acquire weakened to relaxed under its annotation"

# An atomic without an annotation, a relaxed fence, an acquire without a tag.
cat > "$tmp/bare.cu" << 'EOF'
__device__ void f(unsigned* x, unsigned* y) {
  atomicOr(x, 1u);
  __threadfence();  // order: relaxed
  core::DeviceAtomics::store(y, 1u, core::MemoryOrder::release);  // order: release
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(y));
}
EOF
run "$tmp/bare.cu"
expect 1 "bare.cu:2: CUDA atomic function without an order annotation" "planted: a bare atomicOr"
expect 1 "bare.cu:3: a relaxed fence orders nothing" "planted: a relaxed fence"
expect 1 "bare.cu:4: release atomic operation names no \[tag\]" "planted: a release without a tag"
expect 1 "bare.cu:5: inline PTX memory operation without an order annotation" \
  "planted: an unannotated ld.acquire in inline PTX"

# Two releases of one tag: weakening either would leave the tag paired, so it is reported.
cat > "$tmp/tworel.cu" << 'EOF2'
__device__ void a(unsigned* x) {
  // order: release [flag] (a's data before x)
  core::DeviceAtomics::store(x, 1u, core::MemoryOrder::release);
}
__device__ void b(unsigned* x) {
  // order: release [flag] (b's data before x)
  core::DeviceAtomics::store(x, 2u, core::MemoryOrder::release);
}
__device__ unsigned c(unsigned const* x) {
  // order: acquire [flag] (a's or b's data after x)
  return core::DeviceAtomics::load(x, core::MemoryOrder::acquire);
}
EOF2
run "$tmp/tworel.cu"
expect 1 "tworel.cu:6: \[flag\] is released at 2 sites" "planted: one tag released at two sites"

# The real kernels, weakened in a copy of the tree: each weakening is reported.
plant() {  # plant FILE SED-EXPRESSION what PATTERN
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t"
  cp -r "$src/src" "$src/apps" "$tmp/t/"
  sed -i "$2" "$tmp/t/$1"
  if cmp -s "$src/$1" "$tmp/t/$1"; then
    echo "FAIL: $3: the planting changed nothing in $1"
    failed=1
    return
  fi
  "$check" "$tmp/t" > "$tmp/out" 2>&1
  status=$?
  expect 1 "$4" "$3"
}
plant src/heaplab/soa/heap_ref.cuh '/^ *__threadfence();$/d' \
  "real code: the error report's release fence deleted" "heap_ref.cuh:[0-9]+: order annotation on no memory operation"
plant src/heaplab/compact/detail/steps.cuh \
  's/free_blocks().try_set(b, MemoryOrder::release)/free_blocks().try_set(b, MemoryOrder::relaxed)/' \
  "real code: CompactGpu's release of a source block weakened" \
  "steps.cuh:[0-9]+: atomic operation uses relaxed, annotated release"
plant src/heaplab/soa/heap_ref.cuh \
  's/load_alloc_bitmap(b, core::MemoryOrder::acquire)/load_alloc_bitmap(b, core::MemoryOrder::relaxed)/' \
  "real code: device_do's acquire of a block's bitmap weakened" \
  "heap_ref.cuh:[0-9]+: atomic operation uses relaxed, annotated acquire"
# A careful weakening: the code and its annotation agree (relaxed, no tag). Only the pairing
# sees it: the acquire side names [block-free-compact], which nothing releases any more.
plant src/heaplab/compact/detail/steps.cuh \
  's/free_blocks().try_set(b, MemoryOrder::release)/free_blocks().try_set(b, MemoryOrder::relaxed)/;s|// order: release \[block-free-compact\]|// order: relaxed|' \
  "real code: CompactGpu's release weakened, its annotation rewritten to match" \
  "\[block-free-compact\] is acquired but never released"
plant apps/structure/structure.cu '0,/^ *\/\/ order: relaxed (a count/{/^ *\/\/ order: relaxed (a count/d}' \
  "real code: an app's counter without its annotation" \
  "structure.cu:[0-9]+: CUDA atomic function without an order annotation"
exit $failed
