#include "links.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <vector>

namespace cudaenv::archive {

namespace fs = std::filesystem;

namespace {

constexpr int k_max_links = 40; // the kernel's MAXSYMLINKS

void push_parts(std::deque<std::string>& todo, std::string_view path) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos) {
            end = path.size();
        }
        if (end > start) {
            parts.emplace_back(path.substr(start, end - start));
        }
        start = end + 1;
    }
    todo.insert(todo.begin(), parts.begin(), parts.end());
}

std::optional<std::string> read_link(const std::string& path) {
    std::string buf(256, '\0');
    while (true) {
        ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
        if (n < 0) {
            return std::nullopt;
        }
        if (static_cast<std::size_t>(n) < buf.size()) {
            buf.resize(static_cast<std::size_t>(n));
            return buf;
        }
        buf.resize(buf.size() * 2);
    }
}

} // namespace

Resolution resolve_beneath(const fs::path& root, std::string_view rel) {
    std::deque<std::string> todo;
    push_parts(todo, rel);
    std::string here = root.string(); // the real folder reached so far (no links in it)
    std::size_t depth = 0;
    std::vector<std::size_t> marks; // here's length before each component, to go back up
    int links = 0;
    while (!todo.empty()) {
        std::string c = std::move(todo.front());
        todo.pop_front();
        if (c == ".") {
            continue;
        }
        if (c == "..") {
            if (depth == 0) {
                return Resolution::escapes;
            }
            here.resize(marks.back());
            marks.pop_back();
            --depth;
            continue;
        }
        std::string next = here + "/" + c;

        struct stat st {};

        if (::lstat(next.c_str(), &st) != 0) {
            return Resolution::inside; // the kernel stops here (ENOENT)
        }
        if (S_ISLNK(st.st_mode)) {
            if (++links > k_max_links) {
                return Resolution::loops;
            }
            auto target = read_link(next);
            if (!target || target->empty()) {
                return Resolution::inside;
            }
            if (target->front() == '/') {
                return Resolution::escapes;
            }
            push_parts(todo, *target);
            continue;
        }
        if (!S_ISDIR(st.st_mode) && !todo.empty()) {
            return Resolution::inside; // ENOTDIR
        }
        marks.push_back(here.size());
        here = std::move(next);
        ++depth;
    }
    return Resolution::inside;
}

std::string BadLink::reason() const {
    return why == Resolution::loops
               ? "is a symlink loop"
               : "resolves outside its tree through other links ('" + target + "')";
}

std::optional<BadLink> find_bad_link(const fs::path& root) {
    std::vector<std::string> links;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
         !ec && it != end;
         it.increment(ec)) {
        if (it->is_symlink(ec)) {
            links.push_back(it->path().lexically_relative(root).generic_string());
        }
    }
    std::sort(links.begin(), links.end());
    for (const auto& rel : links) {
        auto r = resolve_beneath(root, rel);
        if (r != Resolution::inside) {
            return BadLink{rel, read_link((root / rel).string()).value_or(""), r};
        }
    }
    return std::nullopt;
}

} // namespace cudaenv::archive
