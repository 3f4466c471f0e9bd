// The campaign: forks the worker processes (each runs its own share of the seed's case stream),
// watches them, restarts a worker that crashes or hangs (reporting the case it died on as a
// finding of its own), shows progress, stops them when the budget is spent or on Ctrl-C, and
// writes the summary. `collfuzz fuzz` runs one.
#pragma once

#include <ostream>

#include "harness/campaign/campaign_options.h"

namespace collfuzz::campaign {

class Campaign {
 public:
  explicit Campaign(CampaignOptions options);
  // Runs to the end of the budget; returns the exit code (1 when there are findings).
  int run(std::ostream& out, bool terminal);

 private:
  CampaignOptions options_;
};

}  // namespace collfuzz::campaign
