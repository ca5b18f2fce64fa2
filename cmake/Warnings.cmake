# Warnings for cudaenv's own targets only; third-party headers are included as SYSTEM.
function(cudaenv_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wnull-dereference -Wcast-align -Wextra-semi -Wimplicit-fallthrough -Wformat=2
    -Wconversion -Wsign-conversion)
  if(CUDAENV_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
