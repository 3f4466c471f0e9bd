// collfuzz report OUT [-o report.html]: one self-contained HTML page of a campaign or merged
// directory (harness/report/html_report.h).
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/errors.h"
#include "harness/report/html_report.h"

namespace collfuzz::cli {

int cmd_report(const Flags& flags, const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw InputError(dir, "not a directory");
  const std::filesystem::path out = flags.output.empty()
                                        ? std::filesystem::path(dir) / "report.html"
                                        : std::filesystem::path(flags.output);
  const auto problems = report::write_html_report(dir, out);
  for (const auto& p : problems) std::cerr << "collfuzz report: skipped " << p << "\n";
  std::cout << "collfuzz report: " << out.string() << "\n";
  return kExitOk;
}

}  // namespace collfuzz::cli
