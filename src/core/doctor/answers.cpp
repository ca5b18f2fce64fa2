#include "answers.hpp"

#include "../fs.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <optional>
#include <system_error>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* k_schema = "cudaenv.doctor-answers/1";
constexpr std::size_t k_max_entries = 256;
constexpr std::size_t k_max_answer = 512 * 1024;
constexpr std::size_t k_max_file = 8u << 20;

/// "<real path> <dev> <inode> <size> <mtime> <ctime>"; empty when it cannot be stat'ed.
std::string identity(const fs::path& p) {
    std::error_code ec;
    auto real = fs::canonical(p, ec);

    struct stat st {};

    if (ec || ::stat(real.c_str(), &st) != 0) {
        return {};
    }
    char buf[192];
    std::snprintf(buf,
                  sizeof buf,
                  " %llu %llu %lld %lld.%09ld %lld.%09ld",
                  static_cast<unsigned long long>(st.st_dev),
                  static_cast<unsigned long long>(st.st_ino),
                  static_cast<long long>(st.st_size),
                  static_cast<long long>(st.st_mtim.tv_sec),
                  st.st_mtim.tv_nsec,
                  static_cast<long long>(st.st_ctim.tv_sec),
                  st.st_ctim.tv_nsec);
    return real.string() + buf;
}

} // namespace

Answers::Answers(fs::path file) : m_file(std::move(file)) {
    if (m_file.empty()) {
        return;
    }
    auto text = read_file_prefix(m_file, k_max_file);
    json doc = text ? json::parse(*text, nullptr, false) : json();
    if (!doc.is_object() || doc.value("schema", "") != k_schema || !doc.contains("answers") ||
        !doc["answers"].is_array()) {
        return;
    }
    for (const auto& a : doc["answers"]) {
        if (!a.is_object() || !a.contains("key") || !a["key"].is_string() || !a.contains("out") ||
            !a["out"].is_string() || !a.contains("err") || !a["err"].is_string() ||
            m_entries.size() >= k_max_entries) {
            continue;
        }
        auto key = a["key"].get<std::string>();
        if (m_index.emplace(key, m_entries.size()).second) {
            m_entries.push_back(
                {key, {0, a["out"].get<std::string>(), a["err"].get<std::string>(), false}});
        }
    }
}

Answers::~Answers() {
    for (auto& [key, pending] : m_pending) {
        pending.wait();
    }
}

std::string Answers::key_of(const std::vector<std::string>& argv,
                            const std::vector<fs::path>& inputs,
                            const std::string& salt,
                            bool& keep) {
    // argv[0] by its name only (nvcc reached by three paths is one answer), but by its name: a
    // multi-call binary (ccache as gcc and as clang) answers as what it is called
    std::string key = argv.empty() ? std::string() : fs::path(argv[0]).filename().string();
    keep = true;
    for (const auto& in : inputs) {
        auto id = identity(in);
        keep = keep && !id.empty();
        key += "\n" + id;
    }
    key += "\n" + salt + "\n";
    for (std::size_t i = 1; i < argv.size(); ++i) {
        key += argv[i] + '\x1f';
    }
    return key;
}

void Answers::prefetch(const sys::ProcessRunner& runner,
                       const std::vector<std::string>& argv,
                       const sys::ProcessOptions& options,
                       const std::vector<fs::path>& inputs,
                       const std::string& salt) {
    bool keep = true;
    auto key = key_of(argv, inputs, salt, keep);
    if ((keep && m_index.count(key)) || m_pending.count(key)) {
        return;
    }
    // the thread gets its own copies; only runner.run is called there
    try {
        m_pending.emplace(key, std::async(std::launch::async, [&runner, argv, options]() {
                              return runner.run(argv, options);
                          }));
    } catch (const std::system_error&) {
        return; // no thread to be had: run() starts it when it is asked, as without prefetch
    }
    ++m_asked;
}

Result<sys::ProcessResult> Answers::run(const sys::ProcessRunner& runner,
                                        const std::vector<std::string>& argv,
                                        const sys::ProcessOptions& options,
                                        const std::vector<fs::path>& inputs,
                                        const std::string& salt) {
    bool keep = true;
    auto key = key_of(argv, inputs, salt, keep);
    if (auto it = m_index.find(key); keep && it != m_index.end()) {
        ++m_known;
        return m_entries[it->second].second;
    }
    std::optional<Result<sys::ProcessResult>> got;
    if (auto it = m_pending.find(key); it != m_pending.end()) {
        got.emplace(it->second.get()); // started early: its answer, waited for
        m_pending.erase(it);
    } else {
        ++m_asked;
        got.emplace(runner.run(argv, options));
    }
    auto& ran = *got;
    if (keep && ran && ran->status == 0 && !ran->timed_out &&
        ran->out.size() + ran->err.size() <= k_max_answer) {
        if (m_entries.size() >= k_max_entries) { // the oldest go first
            m_entries.erase(m_entries.begin());
            m_index.clear();
            for (std::size_t i = 0; i < m_entries.size(); ++i) {
                m_index[m_entries[i].first] = i;
            }
        }
        m_index[key] = m_entries.size();
        m_entries.push_back({key, *ran});
        m_dirty = true;
    }
    return std::move(ran);
}

Result<sys::ProcessResult> Answers::ask(const sys::ProcessRunner& runner,
                                        const std::vector<std::string>& argv,
                                        const sys::ProcessOptions& options) {
    ++m_asked;
    return runner.run(argv, options);
}

Result<sys::ProcessResult> Answers::Runner::run(const std::vector<std::string>& argv,
                                                const sys::ProcessOptions& options) const {
    auto inputs = m_inputs;
    if (!argv.empty()) {
        inputs.insert(inputs.begin(), argv[0]); // the program itself
    }
    if (m_prefetch) {
        m_answers.prefetch(m_inner, argv, options, inputs);
        return Error(ErrorCode::internal, "started early; its answer comes to run()");
    }
    return m_answers.run(m_inner, argv, options, inputs);
}

void Answers::save() const {
    if (m_file.empty() || !m_dirty) {
        return;
    }
    json answers = json::array();
    for (const auto& [key, r] : m_entries) {
        answers.push_back({{"key", key}, {"out", r.out}, {"err", r.err}});
    }
    json doc{{"schema", k_schema}, {"answers", std::move(answers)}};
    if (make_dirs(m_file.parent_path())) {
        // invalid UTF-8 in a program's output is replaced, not thrown
        (void)write_file_atomic(m_file,
                                doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
    }
}

} // namespace cudaenv::doctor
