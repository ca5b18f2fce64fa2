#include "elf.hpp"

#include "../fs.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace cudaenv::sys {

namespace {

class ElfFile {
  public:
    explicit ElfFile(const std::filesystem::path& p)
        : m_fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC)) {
        struct stat st {};

        if (m_fd.valid() && ::fstat(m_fd.get(), &st) == 0 && S_ISREG(st.st_mode)) {
            m_size = static_cast<std::uint64_t>(st.st_size);
        }
    }

    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;

    /// Exactly `len` bytes at `off`, or false.
    bool read(std::uint64_t off, void* out, std::size_t len) const {
        if (!m_fd.valid() || off > m_size || len > m_size - off) {
            return false;
        }
        auto n = ::pread(m_fd.get(), out, len, static_cast<off_t>(off));
        return n >= 0 && static_cast<std::size_t>(n) == len;
    }

    std::uint64_t size() const { return m_size; }

  private:
    Fd m_fd;
    std::uint64_t m_size = 0;
};

std::vector<std::string> split_colon(const std::string& s) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= s.size()) {
        auto c = s.find(':', pos);
        auto part = s.substr(pos, c == std::string::npos ? s.npos : c - pos);
        if (!part.empty()) {
            out.push_back(part);
        }
        if (c == std::string::npos) {
            break;
        }
        pos = c + 1;
    }
    return out;
}

/// Reads exactly `len` bytes at `off` of a bounded source.
class ElfBytes {
  public:
    explicit ElfBytes(std::string_view data) : m_data(data) {}

    bool read(std::uint64_t off, void* out, std::size_t len) const {
        if (off > m_data.size() || len > m_data.size() - off) {
            return false;
        }
        if (len != 0) { // an empty read may come with a null buffer (an empty vector's data())
            std::memcpy(out, m_data.data() + off, len);
        }
        return true;
    }

  private:
    std::string_view m_data;
};

template <typename Source> std::optional<ElfDynamic> parse_dynamic(const Source& f) {
    Elf64_Ehdr eh{};
    if (!f.read(0, &eh, sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 512) {
        return std::nullopt;
    }
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    if (!f.read(eh.e_phoff, ph.data(), ph.size() * sizeof(Elf64_Phdr))) {
        return std::nullopt;
    }
    const Elf64_Phdr* dyn = nullptr;
    for (const auto& p : ph) {
        dyn = p.p_type == PT_DYNAMIC ? &p : dyn;
    }
    if (!dyn || dyn->p_filesz == 0 || dyn->p_filesz > (1u << 20)) {
        return std::nullopt;
    }
    std::vector<Elf64_Dyn> entries(dyn->p_filesz / sizeof(Elf64_Dyn));
    if (!f.read(dyn->p_offset, entries.data(), entries.size() * sizeof(Elf64_Dyn))) {
        return std::nullopt;
    }
    std::uint64_t strtab = 0, strsz = 0;
    for (const auto& d : entries) {
        if (d.d_tag == DT_NULL) {
            break;
        }
        strtab = d.d_tag == DT_STRTAB ? d.d_un.d_ptr : strtab;
        strsz = d.d_tag == DT_STRSZ ? d.d_un.d_val : strsz;
    }
    // the string table's address -> its place in the file, through the load segment holding it
    std::optional<std::uint64_t> str_off;
    for (const auto& p : ph) {
        if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab - p.p_vaddr < p.p_filesz) {
            str_off = p.p_offset + (strtab - p.p_vaddr);
        }
    }
    if (!str_off || strsz == 0 || strsz > (64u << 20)) {
        return std::nullopt;
    }
    std::string table(strsz, '\0');
    if (!f.read(*str_off, table.data(), table.size())) {
        return std::nullopt;
    }
    auto at = [&](std::uint64_t off) -> std::optional<std::string> {
        if (off >= table.size()) {
            return std::nullopt;
        }
        auto end = table.find('\0', off);
        if (end == std::string::npos) {
            return std::nullopt;
        }
        return table.substr(off, end - off);
    };
    ElfDynamic out;
    for (const auto& d : entries) {
        if (d.d_tag == DT_NULL) {
            break;
        }
        if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME && d.d_tag != DT_RPATH &&
            d.d_tag != DT_RUNPATH) {
            continue;
        }
        auto s = at(d.d_un.d_val);
        if (!s) {
            return std::nullopt;
        }
        if (d.d_tag == DT_NEEDED) {
            out.needed.push_back(*s);
        } else if (d.d_tag == DT_SONAME) {
            out.soname = *s;
        } else if (d.d_tag == DT_RPATH) {
            auto parts = split_colon(*s);
            out.rpath.insert(out.rpath.end(), parts.begin(), parts.end());
        } else {
            auto parts = split_colon(*s);
            out.runpath.insert(out.runpath.end(), parts.begin(), parts.end());
        }
    }
    return out;
}

} // namespace

std::optional<ElfDynamic> read_elf_dynamic(const std::filesystem::path& path) {
    return parse_dynamic(ElfFile(path));
}

std::optional<ElfDynamic> parse_elf_dynamic(std::string_view bytes) {
    return parse_dynamic(ElfBytes(bytes));
}

std::string expand_origin(const std::string& entry, const std::string& origin_dir) {
    std::string out = entry;
    for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
        std::string t(token);
        for (auto at = out.find(t); at != std::string::npos; at = out.find(t, at)) {
            out.replace(at, t.size(), origin_dir);
            at += origin_dir.size();
        }
    }
    return out;
}

} // namespace cudaenv::sys
