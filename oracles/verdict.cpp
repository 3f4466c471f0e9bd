// A verdict's disagreements, each with its stable signature (oracles/verdict.h), shared by the
// three oracles.
#include "oracles/verdict.h"

#include <utility>

namespace collfuzz {

std::string make_signature(const std::string& oracle, const std::string& kind,
                           const std::string& what, const std::string& executor) {
  return oracle + ":" + kind + ":" + (what.empty() ? "-" : what) + ":" + executor;
}

void add_mismatch(Verdict& v, const char* oracle, const char* kind, const std::string& what,
                  std::string detail) {
  v.mismatches.push_back(Mismatch{oracle, kind, what, std::move(detail),
                                  make_signature(oracle, kind, what, v.executor)});
}

}  // namespace collfuzz
