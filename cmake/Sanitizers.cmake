# CUDAENV_SANITIZERS="address;undefined" builds everything with those sanitizers.
if(CUDAENV_SANITIZERS)
  list(JOIN CUDAENV_SANITIZERS "," _cudaenv_san)
  add_compile_options(-fsanitize=${_cudaenv_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_cudaenv_san})
endif()
