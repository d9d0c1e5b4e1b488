// heaplab's object heap as a framework of the GPU memory-manager survey (docs/survey.md): one heap
// type per size class, 16 B .. 8 KiB in two heaps of half the pool each (object_heap_adapter.cuh
// says what the wrapper costs). Force-included (-include) into the suite's test programs, before
// their own framework selection, which then selects nothing.
#pragma once

#include <string>

#include "TestInstance.cuh"  // the suite's MemoryManagerBase
#include "object_heap_adapter.cuh"
#include "survey_instance.cuh"

using MemoryManager =
    heaplab::survey::AdapterManager<heaplab::survey::ObjectHeapAdapter, MemoryManagerBase>;
const std::string mem_name("heaplab-object-heap");
