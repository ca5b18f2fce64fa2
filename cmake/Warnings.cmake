# Warnings for cudaenv's own targets only; third-party headers are included as SYSTEM.
# -Wnull-dereference is left out: with GCC 12 at -O2 it fires inside libstdc++ code inlined
# from CLI11's headers, which no change of ours can silence.
function(cudaenv_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wcast-align -Wextra-semi -Wimplicit-fallthrough -Wformat=2
    -Wconversion -Wsign-conversion)
  if(CUDAENV_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
