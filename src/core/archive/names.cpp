#include "names.hpp"

#include <cstdint>

namespace cudaenv::archive {

namespace {

/// U+00C0..U+024F: the base letter each Latin letter decomposes to (NFKD, marks dropped,
/// lowercased), '.' where there is none (Ø, Đ, Æ, ...). Generated with Python's unicodedata.
constexpr std::string_view k_latin =
    "aaaaaa.ceeeeiiii.nooooo..uuuuy..aaaaaa.ceeeeiiii.nooooo..uuuuy.y"
    "aaaaaaccccccccdd..eeeeeeeeeegggggggghh..iiiiiiiii...jjkk.llllll."
    "...nnnnnn...oooooo..rrrrrrsssssssstttt..uuuuuuuuuuuuwwyyyzzzzzzs"
    "................................oo.............uu..............."
    ".............aaiioouuuuuuuuuu.aaaa....ggkkoooo..j...gg..nnaa...."
    "aaaaeeeeiiiioooorrrruuuusstt..hh......aaeeooooooooyy............"
    "................";

static_assert(k_latin.size() == 0x250 - 0xC0);

/// Decodes one well-formed UTF-8 sequence at s[i]; 0 length when there is none.
std::uint32_t decode(std::string_view s, std::size_t i, std::size_t& len) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
        len = 0;
        return 0;
    }
    std::uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    for (std::size_t k = 1; k < len; ++k) {
        if ((b(i + k) & 0xc0) != 0x80) {
            len = 0;
            return 0;
        }
        cp = (cp << 6) | (b(i + k) & 0x3f);
    }
    return cp;
}

} // namespace

std::string collision_key(std::string_view name) {
    std::string key;
    key.reserve(name.size());
    for (std::size_t i = 0; i < name.size();) {
        auto c = static_cast<unsigned char>(name[i]);
        if (c < 0x80) {
            key += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            ++i;
            continue;
        }
        std::size_t len = 0;
        std::uint32_t cp = decode(name, i, len);
        if (len == 0) {
            key += static_cast<char>(c); // not UTF-8: compared as bytes
            ++i;
            continue;
        }
        if (cp >= 0x300 && cp <= 0x36f) {
            // a combining mark: NFD's half of an accented letter
        } else if (cp >= 0xc0 && cp < 0x250 && k_latin[cp - 0xc0] != '.') {
            key += k_latin[cp - 0xc0];
        } else {
            key.append(name.substr(i, len));
        }
        i += len;
    }
    return key;
}

} // namespace cudaenv::archive
