// Names that are one name somewhere else. A version copied to (or served by a mirror from) a
// case-insensitive filesystem (macOS, Windows shares) or a normalising one (APFS, ZFS with
// normalization=formD) turns `Foo.h`/`foo.h`, or `é` written precomposed (NFC) and decomposed
// (NFD, `e` + U+0301), into one file: which one survives depends on the copy. One archive may not
// hold two such names.
#pragma once

#include <string>
#include <string_view>

namespace cudaenv::archive {

/// A key equal for names that differ only by ASCII case, by combining diacritical marks
/// (U+0300-U+036F) or by a precomposed Latin letter (U+00C0-U+024F) against its base letter: it
/// catches every NFC/NFD pair of Latin text, and is stricter than normalisation (`é` and `e`
/// collide too, which no NVIDIA archive has). Other scripts are compared by their bytes.
std::string collision_key(std::string_view name);

} // namespace cudaenv::archive
