// An exclusive lock on a campaign's output directory: flock() on <out>/campaign.lock, which
// names its holder (pid, host, start time). The supervisor takes it before touching anything in
// the directory; its worker and reporter processes inherit it across fork(), so that the
// directory stays locked until every process of the campaign is gone: a second campaign, or a
// `--resume` while orphaned workers still write state, is refused (exit 2, naming the holder).
#pragma once

#include <filesystem>
#include <string>

namespace collfuzz::campaign {

class CampaignLock {
 public:
  // Throws InputError("--out", "... in use by ...") when another process holds it.
  explicit CampaignLock(const std::filesystem::path& out);
  ~CampaignLock();
  CampaignLock(const CampaignLock&) = delete;
  CampaignLock& operator=(const CampaignLock&) = delete;

  // Throws the same InputError when a campaign holds the lock of `out`; takes nothing.
  static void check_free(const std::filesystem::path& out);

  static std::filesystem::path file(const std::filesystem::path& out) {
    return out / "campaign.lock";
  }

 private:
  int fd_ = -1;
};

}  // namespace collfuzz::campaign
