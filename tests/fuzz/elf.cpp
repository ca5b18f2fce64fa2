// An ELF object's dynamic section (core/sys/elf): the doctor reads the libraries of whatever is
// installed in a Python environment, so every byte may be hostile. Properties: no crash, no read
// outside the input; every string returned is NUL-free and an rpath entry is never empty.
#include "core/sys/elf.hpp"

#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    auto dyn = sys::parse_elf_dynamic(bytes);
    if (!dyn) {
        return 0;
    }
    auto clean = [](const std::string& s) { return s.find('\0') == std::string::npos; };
    fuzz::require(clean(dyn->soname), "a SONAME with a NUL");
    for (const auto* list : {&dyn->needed, &dyn->rpath, &dyn->runpath}) {
        for (const auto& s : *list) {
            fuzz::require(clean(s), "a string with a NUL", s);
        }
    }
    for (const auto* list : {&dyn->rpath, &dyn->runpath}) {
        for (const auto& s : *list) {
            fuzz::require(!s.empty(), "an empty search path entry");
            auto e = sys::expand_origin(s, "/o");
            fuzz::require(e.find("$ORIGIN") == std::string::npos, "an $ORIGIN left", e);
        }
    }
    return 0;
}
