// Marks a function that nvcc compiles for the GPU as well as for the host,
// so the host compiler's build (and its tests) run the code the kernel runs.
#ifndef RESHARD_EXECUTOR_MEMORY_HOST_DEVICE_H_
#define RESHARD_EXECUTOR_MEMORY_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define RESHARD_HOST_DEVICE __host__ __device__
#else
#define RESHARD_HOST_DEVICE
#endif

#endif  // RESHARD_EXECUTOR_MEMORY_HOST_DEVICE_H_
