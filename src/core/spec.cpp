#include "spec.hpp"

#include "suggest.hpp"

#include <algorithm>

namespace cudaenv {

namespace {

constexpr const char* k_forms = "a SPEC is tf-2.13, torch-2.5, torch-2.5+cu121, jax-0.4.30, 11.8, "
                                "11.8.0, cuda-11.8, cudnn-8.6 (with --cuda) or 11.8+cudnn-8.6";

Error spec_error(std::string_view text, const std::string& why) {
    // a SPEC may come from a file: quoted 120 bytes at most
    std::string shown = printable(text.substr(0, 120)) + (text.size() > 120 ? "..." : "");
    return Error(ErrorCode::usage, "invalid SPEC '" + shown + "': " + why).with_hint(k_forms);
}

Result<Version> version_part(std::string_view spec,
                             std::string_view text,
                             std::size_t min_parts,
                             std::size_t max_parts,
                             const char* what) {
    auto v = Version::parse(text);
    if (!v) {
        return spec_error(
            spec, std::string(what) + " version '" + printable(text) + "' is not a dotted number");
    }
    if (v->size() < min_parts || v->size() > max_parts) {
        return spec_error(spec,
                          std::string(what) + " version '" + printable(text) + "' must have " +
                              std::to_string(min_parts) + " to " + std::to_string(max_parts) +
                              " parts");
    }
    return *v;
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' ||
           (c >= '0' && c <= '9');
}

/// "cudnn-8.6" / "cudnn8.6" -> "8.6"; nullopt if not a cudnn part.
std::optional<std::string_view> cudnn_version_text(std::string_view part) {
    if (part.rfind("cudnn", 0) != 0) {
        return std::nullopt;
    }
    part.remove_prefix(5);
    if (!part.empty() && part.front() == '-') {
        part.remove_prefix(1);
    }
    return part;
}

/// "cu121", "cu118", "cuda12": a wheel variant's tag (not "cudnn..." nor a version).
bool is_variant_tag(std::string_view part) {
    std::size_t digits = part.rfind("cuda", 0) == 0 && part.rfind("cudnn", 0) != 0 ? 4
                         : part.rfind("cu", 0) == 0                                ? 2
                                                                                   : 0;
    if (digits == 0 || part.size() == digits || part.size() > digits + 4) {
        return false;
    }
    return std::all_of(part.begin() + static_cast<std::ptrdiff_t>(digits), part.end(), [](char c) {
        return c >= '0' && c <= '9';
    });
}

Result<Version> cuda_part(std::string_view spec, std::string_view part) {
    if (part.rfind("cuda-", 0) == 0) {
        part.remove_prefix(5);
    } else if (part.rfind("cuda", 0) == 0 && part.size() > 4 && part[4] >= '0' && part[4] <= '9') {
        part.remove_prefix(4);
    }
    return version_part(spec, part, 1, 3, "CUDA");
}

} // namespace

Result<Spec> parse_spec(std::string_view text, const std::vector<std::string>& framework_names) {
    Spec s;
    s.text = std::string(text);
    if (text.empty()) {
        return spec_error(text, "empty");
    }
    if (std::any_of(text.begin(), text.end(), [](char c) {
            return c == ' ' || c == '/' || static_cast<unsigned char>(c) < 0x20;
        })) {
        return spec_error(text, "contains a space, '/' or a control character");
    }

    if (auto plus = text.find('+'); plus != std::string_view::npos) {
        std::string_view left = text.substr(0, plus);
        std::string_view right = text.substr(plus + 1);
        if (is_variant_tag(right)) {
            // torch-2.5+cu121, jax-0.4.30+cuda12: a framework's named CUDA build
            auto fw = parse_spec(left, framework_names);
            if (!fw) {
                return fw;
            }
            if (fw->kind != Spec::Kind::framework) {
                return spec_error(text,
                                  "'+" + printable(right) +
                                      "' names a framework's CUDA build: write it after a "
                                      "framework, as 'torch-2.5+cu121'");
            }
            fw->text = std::string(text);
            fw->variant = std::string(right);
            return fw;
        }
        auto cudnn = cudnn_version_text(right);
        if (!cudnn) {
            return spec_error(text, "the part after '+' must be a cuDNN, as 'cudnn-8.6'");
        }
        s.kind = Spec::Kind::pair;
        s.cuda = CUDAENV_TRY(cuda_part(text, left));
        s.cudnn = CUDAENV_TRY(version_part(text, *cudnn, 1, 4, "cuDNN"));
        return s;
    }

    if (text.front() >= '0' && text.front() <= '9') {
        s.kind = Spec::Kind::cuda;
        s.cuda = CUDAENV_TRY(version_part(text, text, 1, 3, "CUDA"));
        return s;
    }

    // name-version or name==version
    std::size_t sep = std::string_view::npos;
    std::size_t sep_len = 0;
    if (auto eq = text.find("=="); eq != std::string_view::npos) {
        sep = eq;
        sep_len = 2;
    } else {
        // the last '-' followed by a digit separates name and version (tensorflow-gpu-2.10)
        for (std::size_t i = text.size(); i-- > 0;) {
            if (text[i] == '-' && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
                sep = i;
                sep_len = 1;
                break;
            }
        }
    }
    if (sep == std::string_view::npos) {
        if (text.rfind("cuda", 0) == 0 && text.size() > 4 && text[4] >= '0' && text[4] <= '9') {
            s.cuda = CUDAENV_TRY(cuda_part(text, text));
            return s;
        }
        if (auto v = cudnn_version_text(text); v && !v->empty()) {
            s.kind = Spec::Kind::cudnn;
            s.cudnn = CUDAENV_TRY(version_part(text, *v, 1, 4, "cuDNN"));
            return s;
        }
        return spec_error(text, "no version in it");
    }
    std::string name(text.substr(0, sep));
    std::string_view ver = text.substr(sep + sep_len);
    if (name.empty() || !std::all_of(name.begin(), name.end(), is_name_char)) {
        return spec_error(text, "'" + printable(name) + "' is not a name");
    }
    std::transform(name.begin(), name.end(), name.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    if (name == "cuda") {
        s.kind = Spec::Kind::cuda;
        s.cuda = CUDAENV_TRY(version_part(text, ver, 1, 3, "CUDA"));
        return s;
    }
    if (name == "cudnn") {
        s.kind = Spec::Kind::cudnn;
        s.cudnn = CUDAENV_TRY(version_part(text, ver, 1, 4, "cuDNN"));
        return s;
    }
    std::vector<std::string> known = framework_names;
    known.push_back("cuda");
    known.push_back("cudnn");
    if (!framework_names.empty() &&
        std::find(framework_names.begin(), framework_names.end(), name) == framework_names.end()) {
        auto err = Error(ErrorCode::usage,
                         "unknown SPEC '" + printable(text) + "': no framework named '" +
                             printable(name) + "'");
        if (auto m = closest_match(name, known)) {
            err = std::move(err).with_hint("did you mean '" + *m + "-" + printable(ver) + "'?");
        }
        return std::move(err).with_hint(k_forms);
    }
    s.kind = Spec::Kind::framework;
    s.framework = name;
    s.framework_version = CUDAENV_TRY(version_part(text, ver, 2, 4, "framework"));
    return s;
}

} // namespace cudaenv
