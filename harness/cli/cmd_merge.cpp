// collfuzz merge OUT... --into DIR: the finding folders of many runs (shards on N machines) made
// into one (harness/report/merge.h), with its report.html. Exit 1 if any finding, as fuzz does.
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/errors.h"
#include "harness/report/html_report.h"
#include "harness/report/merge.h"

namespace collfuzz::cli {

int cmd_merge(const Flags& flags, const std::vector<std::string>& inputs) {
  if (flags.into.empty()) throw InputError("--into", "required: the merged directory");
  const std::filesystem::path into(flags.into);
  if (std::filesystem::exists(into) && !std::filesystem::is_directory(into))
    throw InputError("--into", flags.into + " is not a directory");
  // A merge replaces the files in DIR/findings: never a campaign's own directory.
  if (std::filesystem::exists(into / "campaign.json"))
    throw InputError("--into", flags.into + " holds a campaign; merge into a directory of its own");
  std::vector<std::filesystem::path> dirs(inputs.begin(), inputs.end());
  std::filesystem::create_directories(flags.into);
  const report::MergeResult r = report::merge_runs(dirs, flags.into);
  for (const auto& p : r.problems) std::cerr << "collfuzz merge: skipped " << p << "\n";
  report::write_html_report(flags.into, std::filesystem::path(flags.into) / "report.html");
  const auto& s = r.summary;
  std::cout << "collfuzz merge: " << s["runs"].size() << " runs, " << s["cases"].get<std::int64_t>()
            << " cases, " << s["findings"].size() << " findings in " << s["groups"].size()
            << " root-cause groups; summary in "
            << (std::filesystem::path(flags.into) / "summary.md").string() << ", report in "
            << (std::filesystem::path(flags.into) / "report.html").string() << "\n";
  return s["findings"].empty() ? kExitOk : kExitMismatch;
}

}  // namespace collfuzz::cli
