#include "pyinfo.hpp"

namespace cudaenv::pyenv {

namespace {

bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::size_t skip_blanks(std::string_view t, std::size_t i) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) {
        ++i;
    }
    return i;
}

/// A quoted string or a bare word at `i`.
std::optional<std::string> literal_at(std::string_view t, std::size_t i) {
    i = skip_blanks(t, i);
    if (i >= t.size()) {
        return std::nullopt;
    }
    if (t[i] == '\'' || t[i] == '"') {
        char q = t[i];
        auto end = t.find(q, i + 1);
        if (end == std::string_view::npos ||
            t.substr(i + 1, end - i - 1).find('\n') != std::string_view::npos) {
            return std::nullopt;
        }
        return std::string(t.substr(i + 1, end - i - 1));
    }
    std::size_t j = i;
    while (j < t.size() && (ident_char(t[j]) || t[j] == '.')) {
        ++j;
    }
    if (j == i) {
        return std::nullopt;
    }
    return std::string(t.substr(i, j - i));
}

/// The quote at `quote` is a tuple's first element: `(` before it, blanks and newlines apart.
bool opens_tuple(std::string_view t, std::size_t quote) {
    while (quote > 0) {
        char c = t[--quote];
        if (c == '(') {
            return true;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            return false;
        }
    }
    return false;
}

} // namespace

std::optional<std::string> python_literal(std::string_view t, std::string_view key) {
    for (std::size_t at = t.find(key); at != std::string_view::npos; at = t.find(key, at + 1)) {
        std::size_t end = at + key.size();
        char before = at > 0 ? t[at - 1] : '\n';
        char after = end < t.size() ? t[end] : '\n';
        if ((before == '\'' || before == '"') && after == before) {
            // a dict key ('key': V), or the first half of a pair ('key', V): only a tuple's
            // first element, so that a list of names (torch 2.x's `__all__ = ['__version__',
            // 'debug', 'cuda', 'git_version', ...]`) is not read as pairs
            std::size_t i = skip_blanks(t, end + 1);
            bool dict_key = i < t.size() && t[i] == ':';
            bool pair = i < t.size() && t[i] == ',' && opens_tuple(t, at - 1);
            if (dict_key || pair) {
                if (auto v = literal_at(t, i + 1)) {
                    return v;
                }
            }
            continue;
        }
        if (ident_char(before) || ident_char(after) || before == '.') {
            continue; // part of a longer name
        }
        // a module-level assignment: at the start of a line, `key = V` or `key: Type = V`
        std::size_t line = t.rfind('\n', at);
        line = line == std::string_view::npos ? 0 : line + 1;
        if (skip_blanks(t, line) != at) {
            continue;
        }
        std::size_t i = skip_blanks(t, end);
        if (i < t.size() && t[i] == ':') {
            auto eq = t.find('=', i);
            auto nl = t.find('\n', i);
            if (eq == std::string_view::npos || (nl != std::string_view::npos && nl < eq)) {
                continue;
            }
            i = eq;
        }
        if (i < t.size() && t[i] == '=' && (i + 1 >= t.size() || t[i + 1] != '=')) {
            if (auto v = literal_at(t, i + 1)) {
                return v;
            }
        }
    }
    return std::nullopt;
}

TfBuildInfo parse_tf_build_info(std::string_view text) {
    TfBuildInfo info;
    info.cuda_build = python_literal(text, "is_cuda_build").value_or("") == "True";
    info.cuda = python_literal(text, "cuda_version");
    if (!info.cuda) {
        info.cuda = python_literal(text, "cuda_version_number");
    }
    info.cudnn = python_literal(text, "cudnn_version");
    if (!info.cudnn) {
        info.cudnn = python_literal(text, "cudnn_version_number");
    }
    return info;
}

std::optional<std::string> parse_torch_cuda(std::string_view text) {
    auto v = python_literal(text, "cuda");
    if (!v || *v == "None" || v->empty()) {
        return std::nullopt;
    }
    return v;
}

} // namespace cudaenv::pyenv
