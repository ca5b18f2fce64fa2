# Cross-compiling for arm64 (Grace, DGX Spark, Jetson) on an x86_64 Debian machine with Debian's
# cross toolchain (crossbuild-essential-arm64) and the :arm64 development packages installed
# through multiarch (dpkg --add-architecture arm64): the libraries and their CMake/pkg-config
# files live in /usr/lib/aarch64-linux-gnu, the headers in /usr/include (+ the triplet folder).
# The `arm64` preset uses it; .ci/arm64 builds, tests and packages with it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Multiarch: the target's libraries are in the host's /usr/lib/aarch64-linux-gnu; find nothing
# of the build machine's own architecture by accident.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")

# The tests run the arm64 binaries under qemu-user (binfmt_misc, or this prefix for CTest's
# gtest discovery and the unit tests).
find_program(CUDAENV_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(CUDAENV_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CUDAENV_QEMU_AARCH64})
endif()
