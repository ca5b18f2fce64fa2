// What the advisories (advisory/match.hpp) are checked against, read through the doctor's Host so
// that a fixture sysroot is a machine like any other: the driver (with whether its GPUs are
// data-center products, NVIDIA's "Tesla" rows), the GPUs' compute capabilities, the NVIDIA
// Container Toolkit (dpkg's status file, else `nvidia-ctk --version`), Jetson Linux (L4T), the
// selected toolkit and its cuBLAS, and every installed version with its cuBLAS. Shared by the
// doctor's advisories probe and `cudaenv audit`.
#pragma once

#include "../advisory/match.hpp"
#include "../version.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

class Host;

struct AdvisoryScope {
    bool machine = true;   ///< driver, container toolkit, Jetson Linux
    bool selected = true;  ///< the selected toolkit when it is not one of cudaenv's versions
    bool installed = true; ///< every installed version (the selected one among them)
};

std::vector<advisory::Subject> advisory_subjects(Host& h, const AdvisoryScope& scope = {});

/// The upstream version of an installed package in dpkg's status file ("1.17.8-1" -> 1.17.8);
/// none when it is absent or not installed ("Status: install ok installed").
std::optional<Version> dpkg_installed_version(std::string_view status, std::string_view package);

/// `nvidia-ctk --version`'s "NVIDIA Container Toolkit CLI version 1.12.0" -> 1.12.0.
std::optional<Version> parse_nvidia_ctk_version(std::string_view out);

/// The cuBLAS of a toolkit at `prefix` (a machine path) that is not one of cudaenv's versions:
/// version.json's libcublas, else a pip-made toolkit's nvidia_cublas-<v>.dist-info, else
/// lib64/libcublas.so.<full version>.
std::optional<Version> toolkit_cublas(Host& h, const std::string& prefix);

} // namespace cudaenv::doctor
