# Debian's hardening (dpkg-buildflags' "hardening=+all"): fortified libc calls, stack protector
# and clash protection, control-flow protection, PIE, full RELRO and BIND_NOW. Control-flow
# protection is the target's own: Intel CET (-fcf-protection) on x86_64, pointer authentication
# and branch target identification (-mbranch-protection=standard) on arm64, as dpkg-buildflags'
# "branch" feature gives each. Optimised builds
# only (_FORTIFY_SOURCE needs optimisation), and not with sanitizers or libFuzzer.
option(CUDAENV_HARDENING "Build with Debian's hardening flags (optimised builds)" ON)
if(CUDAENV_HARDENING AND NOT CUDAENV_SANITIZERS AND NOT CUDAENV_FUZZ)
  include(CheckPIESupported)
  check_pie_supported()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  set(opt "$<CONFIG:Release,RelWithDebInfo,MinSizeRel>")
  add_compile_options("$<${opt}:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=2>"
    -fstack-protector-strong -fstack-clash-protection)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    add_compile_options(-fcf-protection)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    add_compile_options(-mbranch-protection=standard)
  endif()
  add_link_options(LINKER:-z,relro LINKER:-z,now)
endif()
