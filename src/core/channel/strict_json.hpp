// JSON from a signed document (a manifests bundle, root metadata, a mirror's index), read
// strictly: what a key holder wrote is still bounded (docs/channel.md, "Shape"). A signature says
// who wrote a document, not that it is sane, and one stolen or mistaken key must not be able to
// make every host spend minutes and gigabytes parsing it.
//
//   - nesting at most `max_depth` levels (the documents' own schemas need 3 to 4);
//   - a key given twice in one object is refused (a reader taking the first and another the
//     second would each see a different document under one signature);
//   - the document is one JSON value and nothing else (trailing bytes are refused).
//
// Size is bounded by the caller before this runs (the envelope's max_bytes). Unknown fields are
// the schema's business: `check_fields` refuses them where a schema says exactly what it holds.
#pragma once

#include "../error.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <string_view>

namespace cudaenv::channel {

struct JsonLimits {
    std::size_t max_depth = 8;
};

/// Parses `text` under `limits`; `what` names it in errors ("manifests bundle 'URL'"). Errors:
/// integrity (exit 4): not JSON, nested too deep, a key twice.
Result<nlohmann::json>
parse_strict(std::string_view text, const JsonLimits& limits, std::string_view what);

/// `object` (an object) holds no key outside `allowed`; `where` names it ("its payload",
/// "'roles.root'"). Errors: integrity, naming the first unknown key.
Status check_fields(const nlohmann::json& object,
                    std::initializer_list<std::string_view> allowed,
                    std::string_view what,
                    std::string_view where);

} // namespace cudaenv::channel
