#include "bridges.hpp"

#include "../resolve/resolve.hpp"

#include <algorithm>

namespace cudaenv::activate {

namespace {

std::string trim_spaces(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r");
    auto e = s.find_last_not_of(" \t\r");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

/// "8.6" -> 86, "86" -> 86, "sm_86" -> 86; none otherwise.
std::optional<unsigned> compute_capability(std::string s) {
    if (s.rfind("sm_", 0) == 0) {
        s = s.substr(3);
    }
    auto v = Version::try_parse(s);
    if (!v || v->size() > 2) {
        return std::nullopt;
    }
    unsigned cc = v->size() == 2 ? v->major() * 10 + v->minor() : v->major();
    return cc >= 30 && cc <= 199 && (v->size() == 2 ? v->minor() < 10 : true) ? std::optional(cc)
                                                                              : std::nullopt;
}

} // namespace

Result<Target> parse_target(std::string_view text, const std::string& where) {
    Target t;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        std::string line(text.substr(pos, end == std::string_view::npos ? text.npos : end - pos));
        pos = end == std::string_view::npos ? text.size() : end + 1;
        line = trim_spaces(line.substr(0, line.find('#')));
        auto eq = line.find('=');
        if (eq == std::string::npos) {
            continue;
        }
        std::string key = trim_spaces(std::string_view(line).substr(0, eq));
        std::string value = trim_spaces(std::string_view(line).substr(eq + 1));
        if (key == "sm") {
            std::replace(value.begin(), value.end(), ',', ' ');
            std::size_t p = 0;
            while (p < value.size()) {
                auto sp = value.find(' ', p);
                std::string word = value.substr(p, sp == std::string::npos ? value.npos : sp - p);
                p = sp == std::string::npos ? value.size() : sp + 1;
                if (word.empty()) {
                    continue;
                }
                auto cc = compute_capability(word);
                if (!cc) {
                    return Error(ErrorCode::usage,
                                 where + ": 'sm = " + printable(value) + "': '" + printable(word) +
                                     "' is not a compute capability")
                        .with_hint("write them as 'sm = 8.0, 9.0'");
                }
                t.sms.push_back(*cc);
            }
            t.sms_from = where;
        } else if (key == "driver") {
            t.driver = Version::try_parse(value);
            if (!t.driver) {
                return Error(ErrorCode::usage,
                             where + ": 'driver = " + printable(value) +
                                 "' is not a driver version")
                    .with_hint("write it as 'driver = 550.54.15'");
            }
            t.driver_from = where;
        }
    }
    std::sort(t.sms.begin(), t.sms.end());
    t.sms.erase(std::unique(t.sms.begin(), t.sms.end()), t.sms.end());
    return t;
}

Result<Bridge> bridge_for(std::string_view tool,
                          const Version& cuda,
                          const manifest::Catalog& catalog,
                          const std::optional<FrameworkPin>& pin,
                          const Target& target) {
    if (tool != "uv" && tool != "pip" && tool != "conda" && tool != "pixi") {
        return Error(ErrorCode::usage, "env --for: unknown tool '" + std::string(tool) + "'")
            .with_hint("one of uv, pip, conda, pixi");
    }
    Bridge b;
    std::string mm = cuda.truncated(std::min<std::size_t>(cuda.size(), 2)).str();
    if (tool == "uv" || tool == "pip") {
        // PyTorch's build for this CUDA: the project's release, else the newest one known
        const auto* torch = catalog.framework("pytorch");
        const manifest::FrameworkRelease* row = nullptr;
        std::string which;
        if (torch && pin && pin->framework == "pytorch") {
            row = torch->find(pin->version);
            which = "the project's torch " + pin->version.str() + " (" + pin->source + ")";
        } else if (torch && !torch->releases.empty()) {
            row = &torch->releases.front();
            which = "torch " + row->series.str() + ", the newest the manifests know";
        }
        const manifest::FrameworkVariant* var = row ? best_variant(*row, cuda) : nullptr;
        std::string tag = var ? var->tag : manifest::FrameworkVariant::torch_tag(cuda);
        if (!row) {
            b.notes.push_back(tag + ": the selected CUDA " + mm + " (no PyTorch release known)");
        } else if (!var) {
            b.notes.push_back(which + " has no build for CUDA " + std::to_string(cuda.major()) +
                              " (it has " +
                              [&] {
                                  std::string t;
                                  for (const auto& v : row->variants) {
                                      t += (t.empty() ? "" : ", ") + v.tag;
                                  }
                                  return t;
                              }() +
                              "): " + tag + " may not exist");
        } else if (cuda.size() < 2 || var->cuda.minor() != cuda.minor()) {
            b.notes.push_back(tag + ": " + which + "'s build for CUDA " +
                              std::to_string(cuda.major()) + " nearest the selected " + mm +
                              " (it brings its own CUDA " + var->cuda.str() +
                              " libraries; minor-version compatibility)");
        } else {
            b.notes.push_back(tag + ": " + which + "'s build for the selected CUDA " + mm);
        }
        if (var && target.driver) {
            if (const auto* rel = catalog.newest_cuda(var->cuda);
                rel && rel->driver_compat_min &&
                Version::compare_numeric(*target.driver, *rel->driver_compat_min) < 0) {
                b.notes.push_back(
                    "warning: " + tag + " needs a driver >= " + rel->driver_compat_min->str() +
                    "; the target's is " + target.driver->str() + " (" + target.driver_from + ")");
            }
        }
        if (tool == "uv") {
            b.vars.emplace_back("UV_TORCH_BACKEND", tag);
        } else {
            b.vars.emplace_back("PIP_INDEX_URL", "https://download.pytorch.org/whl/" + tag);
            b.vars.emplace_back("PIP_EXTRA_INDEX_URL", "https://pypi.org/simple");
        }
    } else {
        b.vars.emplace_back("CONDA_OVERRIDE_CUDA", mm);
        b.notes.push_back("CONDA_OVERRIDE_CUDA=" + mm + ": the __cuda virtual package " +
                          std::string(tool) + " solves against, the selected CUDA");
    }
    if (!target.sms.empty()) {
        std::string archs, torch_list;
        for (unsigned sm : target.sms) {
            archs += (archs.empty() ? "" : ";") + std::to_string(sm);
            torch_list += (torch_list.empty() ? "" : ";") + std::to_string(sm / 10) + "." +
                          std::to_string(sm % 10);
        }
        b.vars.emplace_back("CUDAARCHS", archs);
        b.vars.emplace_back("TORCH_CUDA_ARCH_LIST", torch_list);
        b.notes.push_back("architectures from " + target.sms_from);
    } else {
        b.notes.push_back("no GPU found and no 'sm =' in .cuda-version: CUDAARCHS and "
                          "TORCH_CUDA_ARCH_LIST are left to the tools");
    }
    return b;
}

} // namespace cudaenv::activate
