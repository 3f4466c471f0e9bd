// collfuzz fuzz: a fuzzing campaign (harness/campaign): generated cases run on the reference and
// on every executor, disagreements deduplicated by signature, shrunk and written as case files;
// summary.md and summary.json at the end. Exit 1 if any finding.
#include <unistd.h>
#include <algorithm>

#include <iostream>

#include "harness/campaign/campaign.h"
#include "harness/campaign/campaign_state.h"
#include "harness/cli/commands.h"
#include "harness/core/errors.h"
#include "harness/report/html_report.h"

namespace collfuzz::cli {

int cmd_fuzz(const Flags& flags) {
  campaign::CampaignOptions o;
  const campaign::CampaignDirectory dir(flags.out);
  if (flags.seconds < 0) throw InputError("--seconds", "expected seconds >= 0");
  if (flags.cases < 0) throw InputError("--cases", "expected a count >= 0");
  // The explicit flag wins over the engine's environment; a bad value exits 2 naming its source.
  const campaign::Shard shard = campaign::resolve_shard(flags.shard);
  if (flags.resume) {
    if (!dir.has_campaign())
      throw InputError("--resume", flags.out + " holds no campaign to resume");
    o = dir.load_options();
    // The budget may be extended; the seed, executors, jobs and level stay the campaign's.
    if (flags.seconds > 0) o.seconds = flags.seconds;
    if (flags.cases > 0) o.cases = flags.cases;
    if (!flags.shard.empty() && (shard.index != o.shard.index || shard.count != o.shard.count))
      throw InputError("--shard", "the campaign in " + flags.out + " runs shard " + o.shard.text());
    std::cout << "resuming the campaign in " << flags.out << " (seed " << o.seed << ", " << o.jobs
              << " jobs)\n";
  } else {
    if (dir.has_campaign()) {
      throw InputError(
          "--out",
          flags.out + " already holds a campaign: --resume continues it, or choose another --out");
    }
    o.seed = flags.seed;
    o.seconds = flags.seconds;
    o.cases = flags.cases;
    o.jobs = flags.jobs;
    o.shrink = !flags.no_shrink;
    o.shard = shard;
    o.level = parse_level_flag(flags.level);
    const ExecutorOptions eo = executor_options(flags);
    if (flags.executors.empty()) {
      o.executors = campaign::available_executors(eo);
    } else {
      for (auto& name : parse_executor_list(flags.executors)) {
        if (name != "reference") o.executors.push_back(name);  // the reference is the expected side
      }
    }
  }
  o.out = flags.out;
  o.executor_options = executor_options(flags);
  // A worker is killed as hung only after an external executor has had its whole --timeout on
  // one case (that executor reports the case as a timeout and is restarted; the worker goes on).
  o.hang_seconds = std::max(o.hang_seconds, o.executor_options.case_timeout_seconds + 30);
  std::cout << "collfuzz fuzz: seed " << o.seed << ", reference vs ";
  if (o.executors.empty()) std::cout << "(no executor available: only the reference runs)";
  for (std::size_t i = 0; i < o.executors.size(); ++i)
    std::cout << (i ? "," : "") << o.executors[i];
  if (o.shard.sharded()) std::cout << ", shard " << o.shard.text() << " (" << o.shard.source << ")";
  std::cout << ", " << o.jobs << " worker process" << (o.jobs == 1 ? "" : "es") << ", budget ";
  if (o.seconds > 0) std::cout << o.seconds << " s ";
  if (o.cases > 0) std::cout << o.cases << " cases ";
  if (o.seconds <= 0 && o.cases <= 0) std::cout << "none (Ctrl-C stops it) ";
  std::cout << "-> " << o.out.string() << "\n" << std::flush;
  const int rc = campaign::Campaign(o).run(std::cout, ::isatty(STDOUT_FILENO) != 0);
  report::write_html_report(o.out, o.out / "report.html");  // linked from summary.md
  return rc;
}

}  // namespace collfuzz::cli
