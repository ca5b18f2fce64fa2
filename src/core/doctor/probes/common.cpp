#include "probes.hpp"

namespace cudaenv::doctor::checks {

std::string gpu_label(std::size_t index, const std::string& name) {
    return "GPU " + std::to_string(index) + (name.empty() ? "" : " (" + name + ")");
}

std::string sm(unsigned cc) {
    return "sm_" + std::to_string(cc);
}

std::string cc_dotted(unsigned cc) {
    return std::to_string(cc / 10) + "." + std::to_string(cc % 10);
}

std::string cuda_from_int(long long v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cudnn_from_int(long long v) {
    long long unit = v >= 90000 ? 10000 : 1000;
    return std::to_string(v / unit) + "." + std::to_string((v % unit) / 100) + "." +
           std::to_string(v % 100);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (const auto& p : parts) {
        if (!out.empty()) {
            out += sep;
        }
        out += p;
    }
    return out;
}

std::string lib_dir(Host& h, const std::string& prefix) {
    std::string base = prefix == "/" ? "" : prefix;
    if (h.is_dir(base + "/lib64")) {
        return base + "/lib64";
    }
    return base + "/lib";
}

} // namespace cudaenv::doctor::checks
