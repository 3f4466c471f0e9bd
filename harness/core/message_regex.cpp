#include "harness/core/message_regex.h"

#include <regex>

#include "harness/core/errors.h"

namespace collfuzz {

void check_message_regex(const std::string& pattern, const std::string& path) {
  if (pattern.empty()) throw InputError(path, "an empty regular expression matches any message");
  if (pattern.size() > kMaxMessageRegexBytes) {
    throw InputError(path, "the regular expression is longer than " +
                               std::to_string(kMaxMessageRegexBytes) + " bytes");
  }
  // Python's anchors \A and \Z, which std::regex would read as the letters A and Z.
  for (std::size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '\\') continue;
    if (pattern[i + 1] == 'A' || pattern[i + 1] == 'Z') {
      throw InputError(path, std::string("invalid regular expression (ECMAScript): \\") +
                                 pattern[i + 1] + " is Python-only; use ^ or $");
    }
    ++i;  // skip the escaped character
  }
  try {
    std::regex re(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(path, std::string("invalid regular expression (ECMAScript): ") + e.what());
  }
}

bool message_regex_matches(const std::string& pattern, const std::string& message) {
  try {
    return std::regex_search(message, std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error&) {
    return false;  // checked when read; a pattern that still fails matches nothing
  }
}

}  // namespace collfuzz
