// Portability macros for code that compiles both as CUDA device code and as plain C++17.
// Part of heaplab::core: includes nothing of ours and makes no CUDA runtime calls.
#pragma once

#if defined(__CUDACC__)
#define HEAPLAB_HD __host__ __device__
#define HEAPLAB_DEVICE __device__
#define HEAPLAB_HD_INLINE __host__ __device__ __forceinline__
#else
#define HEAPLAB_HD
#define HEAPLAB_DEVICE
#define HEAPLAB_HD_INLINE inline
#endif

// True while compiling the device side of a CUDA translation unit.
#if defined(__CUDA_ARCH__)
#define HEAPLAB_DEVICE_CODE 1
#else
#define HEAPLAB_DEVICE_CODE 0
#endif
