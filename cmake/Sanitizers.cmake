# CUDAENV_SANITIZERS="address;undefined" builds everything with those sanitizers.
if(CUDAENV_SANITIZERS)
  list(JOIN CUDAENV_SANITIZERS "," _cudaenv_san)
  add_compile_options(-fsanitize=${_cudaenv_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_cudaenv_san})
  # ASan and UBSan put ~1.5M pointers in .data (their metadata): linked as a PIE, every process
  # relocates and so touches all 44 MiB of it at startup -- 0.5 s per cudaenv run, thousands of
  # runs in the suites. Linked non-PIE the addresses are fixed at link time. (TSan wants a PIE.)
  if(NOT "thread" IN_LIST CUDAENV_SANITIZERS)
    add_link_options(-no-pie)
  endif()
endif()
