// Plain (ustar) tar bytes built in memory, entry by entry, for the extraction filter's unit tests
// and the fuzz seeds: every header field under the test's control, names included.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace cudaenv::test {

class TarWriter {
  public:
    TarWriter& file(std::string_view name, std::string_view data, unsigned mode = 0644) {
        return add(name, '0', data, {}, mode);
    }

    TarWriter& dir(std::string_view name, unsigned mode = 0755) {
        return add(name, '5', {}, {}, mode);
    }

    TarWriter& symlink(std::string_view name, std::string_view target) {
        return add(name, '2', {}, target, 0777);
    }

    TarWriter& hardlink(std::string_view name, std::string_view target) {
        return add(name, '1', {}, target, 0644);
    }

    /// Any other type flag: '3' character device, '4' block device, '6' FIFO.
    TarWriter& special(std::string_view name, char type) { return add(name, type, {}, {}, 0644); }

    /// The archive: the entries, then two zero blocks.
    std::string bytes() const { return m_out + std::string(1024, '\0'); }

  private:
    TarWriter& add(std::string_view name,
                   char type,
                   std::string_view data,
                   std::string_view link,
                   unsigned mode) {
        char h[512] = {};
        std::string_view prefix;
        if (name.size() > 100) { // ustar: the part before a slash goes into the 155-byte prefix
            auto cut = name.rfind('/', 155);
            prefix = name.substr(0, cut);
            name = name.substr(cut + 1);
        }
        // memcpy from an empty string_view's null data() is undefined: copy() instead
        name.substr(0, 100).copy(h, 100);
        std::snprintf(h + 100, 8, "%07o", mode);
        std::snprintf(h + 108, 8, "%07o", 0u);
        std::snprintf(h + 116, 8, "%07o", 0u);
        std::snprintf(h + 124, 12, "%011zo", data.size());
        std::snprintf(h + 136, 12, "%011o", 0u);
        h[156] = type;
        link.substr(0, 100).copy(h + 157, 100);
        std::memcpy(h + 257, "ustar", 6);
        std::memcpy(h + 263, "00", 2);
        prefix.substr(0, 155).copy(h + 345, 155);
        std::memset(h + 148, ' ', 8);
        unsigned sum = 0;
        for (char c : h) {
            sum += static_cast<unsigned char>(c);
        }
        std::snprintf(h + 148, 8, "%06o", sum);
        m_out.append(h, 512);
        if (!data.empty()) {
            m_out.append(data);
        }
        m_out.append((512 - data.size() % 512) % 512, '\0');
        return *this;
    }

    std::string m_out;
};

} // namespace cudaenv::test
