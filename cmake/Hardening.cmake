# Debian's hardening (dpkg-buildflags' "hardening=+all"): fortified libc calls, stack protector
# and clash protection, control-flow protection, PIE, full RELRO and BIND_NOW. Optimised builds
# only (_FORTIFY_SOURCE needs optimisation), and not with sanitizers or libFuzzer.
option(CUDAENV_HARDENING "Build with Debian's hardening flags (optimised builds)" ON)
if(CUDAENV_HARDENING AND NOT CUDAENV_SANITIZERS AND NOT CUDAENV_FUZZ)
  include(CheckPIESupported)
  check_pie_supported()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  set(opt "$<CONFIG:Release,RelWithDebInfo,MinSizeRel>")
  add_compile_options("$<${opt}:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=2>"
    -fstack-protector-strong -fstack-clash-protection -fcf-protection)
  add_link_options(LINKER:-z,relro LINKER:-z,now)
endif()
