// A fleet mirror's recompressed archives (core/mirror/recompressed): what a mirror or network
// attacker controls on a host that installs from it. The first byte picks how the rest is used:
//   0: a whole index file, as fetched -- the envelope and the signature check meet it;
//   1: an index payload, signed here with the harness's trusted key -- every entry check meets it;
//   2: tar bytes this harness compresses with zstd (so the filter behind a valid stream is
//   reached); 3: raw bytes given to cudaenv's zstd decoder as they are (corrupt, truncated and
//   hostile frames:
//      a window beyond the limit, skippable frames, bad checksums).
// Properties: no crash or sanitizer report; errors are one printable line; an accepted index only
// points below cudaenv-recompressed/ at .tar.zst files, and made again from what it holds it opens
// to the same; an extraction keeps every property of extract_check.hpp.
#include "core/mirror/recompressed.hpp"

#include "core/channel/signing.hpp"
#include "core/sys/dynlib.hpp"
#include "extract_check.hpp"

#include <string>
#include <vector>

using namespace cudaenv;

namespace {

const channel::SecretKey& harness_key() {
    static const channel::SecretKey k = [] {
        channel::SecretKey s;
        for (std::size_t i = 0; i < s.seed.size(); ++i) {
            s.seed[i] = static_cast<std::uint8_t>(i * 5 + 3);
        }
        return s;
    }();
    return k;
}

const std::vector<channel::PublicKey>& trusted() {
    static const std::vector<channel::PublicKey> keys = [] {
        if (!sys::load(sys::k_crypto | sys::k_archive)) {
            fuzz::fail("libcrypto or libzstd cannot be loaded");
        }
        return std::vector<channel::PublicKey>{*channel::public_key_of(harness_key())};
    }();
    return keys;
}

void index_case(std::string bytes, bool sign_here) {
    if (sign_here) {
        std::string format = "cudaenv-recompressed/1";
        auto sig = channel::sign(harness_key(), format + "\n" + bytes);
        fuzz::require(static_cast<bool>(sig), "signing failed");
        bytes = format + "\nsignature " + trusted()[0].id() + " " +
                channel::to_hex(sig->data(), sig->size()) + "\n\n" + bytes;
    }
    auto idx = mirror::open_index(bytes, channel::KeyRing::of(trusted()), "fuzz.index");
    fuzz::check(idx, "open_index");
    if (!idx) {
        return;
    }
    std::vector<mirror::RecompressedArchive> all;
    for (const auto& [sha, a] : idx->by_original) {
        fuzz::require(sha == a.original_sha256, "an entry filed under another hash", sha);
        fuzz::require(a.path.rfind("cudaenv-recompressed/", 0) == 0 && a.path.size() > 8 &&
                          a.path.compare(a.path.size() - 8, 8, ".tar.zst") == 0 &&
                          a.path.find("/../") == std::string::npos &&
                          a.path.find("//") == std::string::npos,
                      "an accepted entry points outside its folder",
                      a.path);
        all.push_back(a);
    }
    auto again = mirror::make_index(all, idx->created, {harness_key()});
    if (!again) {
        fuzz::fail("an accepted index cannot be made again", again.error().full_message());
    }
    auto reopened = mirror::open_index(*again, channel::KeyRing::of(trusted()), "fuzz.index");
    if (!reopened) {
        fuzz::fail("a re-made index is refused", reopened.error().full_message());
    }
    fuzz::require(reopened->by_original.size() == idx->by_original.size(),
                  "a re-made index holds something else");
}

std::string zstd_of(const std::uint8_t* data, std::size_t n) {
    const auto& z = sys::zstd();
    ZSTD_CCtx* c = z.create_cctx();
    z.cctx_set_parameter(c, ZSTD_c_compressionLevel, 1);
    z.cctx_set_parameter(c, ZSTD_c_checksumFlag, 1);
    std::string out;
    std::vector<char> buf(1 << 16);
    ZSTD_inBuffer in{data, n, 0};
    std::size_t left = 1;
    while (left != 0) {
        ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
        left = z.compress_stream2(c, &ob, &in, ZSTD_e_end);
        if (z.is_error(left)) {
            fuzz::fail("zstd could not compress the input");
        }
        out.append(buf.data(), ob.pos);
    }
    z.free_cctx(c);
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    trusted();
    const std::uint8_t* body = data + 1;
    std::size_t n = size - 1;
    switch (data[0] % 4) {
    case 0:
    case 1:
        index_case(std::string(reinterpret_cast<const char*>(body), n), data[0] % 4 == 1);
        return 0;
    default:
        break;
    }
    std::string zst =
        data[0] % 4 == 2 ? zstd_of(body, n) : std::string(reinterpret_cast<const char*>(body), n);
    auto in = fuzz::memory_file(reinterpret_cast<const std::uint8_t*>(zst.data()), zst.size());
    auto dest = fuzz::fresh_dest();
    auto got = cudaenv::archive::extract(
        in, dest, cudaenv::archive::Compression::zstd, "", fuzz::small_limits());
    fuzz::check(got, "extract (zstd)");
    if (got) {
        fuzz::check_extracted(*got, dest);
    }
    fuzz::remove_dest(dest);
    return 0;
}
