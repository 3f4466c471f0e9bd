// Text from a case file, an executor or a path, made safe inside XML or HTML (JUnit reports, the
// campaign report): the five markup characters become entities, and a control character other
// than newline and tab (which XML 1.0 cannot hold at all) becomes '?'. Attribute values and
// element text both take it.
#pragma once

#include <string>
#include <string_view>

namespace collfuzz {

std::string markup_escape(std::string_view text);

}  // namespace collfuzz
