# What `cmake --install` lays down, and the Debian package CPack makes of it (docs/packaging.md):
#   cmake --workflow --preset deb     ->  build/deb/cudaenv_<version>_<arch>.deb
# The package holds only files under /usr; the machine-wide root (/opt/cudaenv), its config file
# (/etc/cudaenv/config) and /usr/local/cuda are made by cudaenv at run time, on request.

install(DIRECTORY manifests/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cudaenv/manifests
        FILES_MATCHING PATTERN "*.json")

# Completions where each shell looks for a package's files: Debian's vendor folders under /usr,
# and the site folders their shells read under any other prefix (/usr/local).
install(FILES completions/cudaenv.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME cudaenv)
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  install(FILES completions/_cudaenv DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
else()
  install(FILES completions/_cudaenv DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
endif()
install(FILES completions/cudaenv.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)

# Man pages (packaging/man, generated from the CLI's --help and checked by packaging.man_sync)
# and the changelog, compressed as Debian wants them: gzip -9n (no name, no timestamp).
find_program(CUDAENV_GZIP gzip REQUIRED)
file(GLOB CUDAENV_MAN_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/packaging/man/*.1)
set(CUDAENV_COMPRESSED "")
foreach(src ${CUDAENV_MAN_PAGES} ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
  get_filename_component(name ${src} NAME)
  set(out ${PROJECT_BINARY_DIR}/packaging/${name}.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/packaging
    COMMAND ${CUDAENV_GZIP} -9nc ${src} > ${out}
    DEPENDS ${src} VERBATIM)
  list(APPEND CUDAENV_COMPRESSED ${out})
  if(name MATCHES "\\.1$")
    install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endforeach()
add_custom_target(cudaenv_compressed_docs ALL DEPENDS ${CUDAENV_COMPRESSED})
install(FILES ${PROJECT_BINARY_DIR}/packaging/changelog.gz
              ${PROJECT_SOURCE_DIR}/packaging/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES README.md ARCHITECTURE.md docs/packaging.md packaging/config.example
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cudaenv)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "The cudaenv authors <cudaenv@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "installer and version manager for NVIDIA CUDA and cuDNN")
# The extended description: CPack indents it and turns the empty line into " ."
set(CPACK_PACKAGE_DESCRIPTION "cudaenv is pyenv for CUDA: it resolves a TensorFlow release or a CUDA version
to the CUDA and cuDNN archives NVIDIA publishes, downloads and verifies them,
and lays them out in versioned prefixes with cuDNN flattened into lib64. It
pins projects to a version, switches /usr/local/cuda and the loader's cache
atomically with a rollback, puts shims on PATH, and diagnoses a broken GPU
stack layer by layer (cudaenv doctor).

Run as root, it keeps its versions in the machine-wide root /opt/cudaenv,
which every user can read and select from.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # cudaenv_<version>_<arch>.deb
# Debian's name for the target's architecture: CPack asks `dpkg --print-architecture`, which is
# the build machine's, so a cross build (the arm64 preset) says it (dpkg-shlibdeps then reads
# the :arm64 libraries' shlibs through multiarch).
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
  endif()
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/cudaenv/cudaenv")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# libc6 and libstdc++6 from what the binary links (dpkg-shlibdeps). libcurl, libarchive,
# libcrypto, liblzma and libzstd are loaded with dlopen on first use, which dpkg-shlibdeps cannot see:
# they are declared here, and cudaenv checks the libcurl it loads (7.85 or newer, with TLS).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libcurl4 (>= 7.85.0), libarchive13 (>= 3.6.0), libssl3 (>= 3.0.0), liblzma5 (>= 5.2.2), libzstd1 (>= 1.4.0)")
# bash-completion, zsh and fish read the completions.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, zsh, fish")
# postrm (purge: what cudaenv made at run time) and triggers (libc-bin rebuilds the loader's cache
# after a purge removed cudaenv's ld.so.conf.d entry).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/debian/postrm
    ${PROJECT_SOURCE_DIR}/packaging/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
