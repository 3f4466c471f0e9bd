// Text from a case file, an executor or a path, made safe to print to a terminal: every control
// character (C0, DEL, C1), every byte that is not valid UTF-8 and the bidirectional overrides are
// written as \xNN (one per byte), so that a case whose name holds an escape sequence cannot clear
// the screen or move the cursor. Valid UTF-8 text is kept as it is. JSON output does not need it
// (nlohmann escapes control characters).
#pragma once

#include <string>
#include <string_view>

namespace collfuzz {

// One value (a name, a path): newlines and tabs are escaped too.
std::string terminal_text(std::string_view text);
// A message of several lines: newlines and tabs are kept, every other control is escaped.
std::string terminal_lines(std::string_view text);

}  // namespace collfuzz
