// heaplab's RW_malloc (RW Alg. 3; docs/rw.md) as a framework of the GPU memory-manager survey
// (docs/survey.md): force-included (-include) into the suite's test programs, before their own
// framework selection, which then selects nothing. 16-byte pages, requests up to 32 KiB
// (RwMallocAdapter, src/heaplab/families/malloc/gpu/rw_malloc_adapter.cuh); the pool is the size
// the program asks for, its bitmap (1/128 of it) and run-length side table (1/8) beside it.
#pragma once

#include <string>

#include "TestInstance.cuh"  // the suite's MemoryManagerBase
#include "heaplab/families/malloc/gpu/rw_malloc_adapter.cuh"
#include "survey_instance.cuh"

using MemoryManager =
    heaplab::survey::AdapterManager<heaplab::malloc_family::RwMallocAdapter, MemoryManagerBase>;
const std::string mem_name("heaplab-RW_malloc");
