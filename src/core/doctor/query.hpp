// The library-query child (`cudaenv __doctor-query KIND PATH`): dlopens one library by path,
// calls the functions that say what it is, and prints key=value lines. Run in its own process by
// Host::query so that a library that crashes, hangs or clashes with another CUDA major cannot harm
// the doctor. Kinds: cudart (cudaRuntimeGetVersion), cudnn (cudnnGetVersion,
// cudnnGetCudartVersion), cuda (cuInit, cuDriverGetVersion), nvml (driver version, and per GPU:
// name, bus id, compute capability, MIG mode and instances, temperature, throttle reasons).
#pragma once

#include <ostream>
#include <string_view>

namespace cudaenv::doctor {

/// Prints the answer on `out`; returns the process exit status (0, or 3 when it cannot load).
int query_library_here(std::string_view kind, const char* path, std::ostream& out);

} // namespace cudaenv::doctor
