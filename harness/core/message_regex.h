// A stored diagnostic's `message_regex` (docs/case-format.md, "Expectations"): a regular
// expression searched in a message, as Python's `re.search` does for JAX tests'
// `assertRaisesRegex`. The dialect is ECMAScript (std::regex), used for the subset it shares with
// Python's `re` (the doc lists it); constructs only one of them has fail to compile or differ.
#pragma once

#include <cstddef>
#include <string>

namespace collfuzz {

inline constexpr std::size_t kMaxMessageRegexBytes = 4096;

// Throws InputError(path, ...) when `pattern` is empty, longer than kMaxMessageRegexBytes, or not
// a valid ECMAScript regular expression.
void check_message_regex(const std::string& pattern, const std::string& path);

// Whether `pattern` (already checked) occurs anywhere in `message` (re.search, not re.fullmatch).
bool message_regex_matches(const std::string& pattern, const std::string& message);

}  // namespace collfuzz
