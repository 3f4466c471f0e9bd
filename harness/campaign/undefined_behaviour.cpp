#include "harness/campaign/undefined_behaviour.h"

namespace collfuzz::campaign {

std::string unavailable_reason_class(const std::string& reason) {
  std::string out;
  for (std::size_t i = 0; i < reason.size() && out.size() < 160; ++i) {
    const char ch = reason[i];
    if (ch >= '0' && ch <= '9') {
      if (out.empty() || out.back() != 'N') out += 'N';
      while (i + 1 < reason.size() && reason[i + 1] >= '0' && reason[i + 1] <= '9') ++i;
    } else {
      out += ch == '\n' ? ' ' : ch;
    }
  }
  return out;
}

}  // namespace collfuzz::campaign
