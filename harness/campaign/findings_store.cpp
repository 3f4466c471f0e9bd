#include "harness/campaign/findings_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "harness/campaign/finding_repro.h"
#include "harness/core/case_json.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::campaign {

FindingsStore::FindingsStore(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_);
}

std::string FindingsStore::slug(const std::string& signature) {
  std::string s;
  for (char ch : signature) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
    s += ok ? ch : '_';
  }
  if (s.size() > 120) s.resize(120);
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char ch : signature) h = (h ^ ch) * 0x100000001b3ULL;
  char tail[16];
  std::snprintf(tail, sizeof tail, "-%08llx", static_cast<unsigned long long>(h & 0xffffffffULL));
  return s + tail;
}

bool FindingsStore::claim(const std::string& signature) {
  if (seen_.count(signature)) return false;
  seen_.insert(signature);
  const auto claim_file = dir_ / (slug(signature) + ".claim");
  if (disk_full_injected()) {
    seen_.erase(signature);
    throw_write_error("cannot create " + claim_file.string(), ENOSPC);
  }
  const int fd = ::open(claim_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    const int err = errno;
    seen_.erase(signature);
    throw_write_error("cannot create " + claim_file.string(), err);
  }
  const std::string text = signature + "\n";
  const auto n = ::write(fd, text.data(), text.size());
  const int err = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : ENOSPC);
  ::close(fd);
  if (err != 0) {
    ::unlink(claim_file.c_str());
    seen_.erase(signature);
    throw_write_error("cannot write " + claim_file.string(), err);
  }
  return true;
}

void FindingsStore::unclaim(const std::string& signature) {
  std::error_code ec;
  std::filesystem::remove(dir_ / (slug(signature) + ".claim"), ec);
  seen_.erase(signature);
}

int FindingsStore::remove_orphan_claims() {
  std::vector<std::filesystem::path> orphans;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".claim") {
      const auto outcomes = dir_ / (e.path().stem().string() + ".outcomes.json");
      if (!std::filesystem::exists(outcomes, ec)) orphans.push_back(e.path());
    } else if (name.starts_with(".") && name.find(".tmp.") != std::string::npos) {
      // A temporary file of a write that a killed process left half done.
      std::filesystem::remove(e.path(), ec);
    }
  }
  int removed = 0;
  for (const auto& p : orphans) removed += std::filesystem::remove(p, ec) ? 1 : 0;
  return removed;
}

void FindingsStore::write(const std::string& signature, const Case& c,
                          const nlohmann::json& outcomes) {
  const std::string stem = slug(signature);
  nlohmann::json out = outcomes;
  out["signature"] = signature;
  out["case_file"] = stem + ".json";
  // The outcomes first: a case file always has its outcomes beside it.
  write_file_atomically(dir_ / (stem + ".outcomes.json"), out.dump(2) + "\n");
  write_file_atomically(dir_ / (stem + ".json"), case_to_json(c).dump(2) + "\n");
  write_finding_repro(dir_, stem, signature, c);
}

std::vector<FindingRecord> FindingsStore::load_all() const {
  std::vector<FindingRecord> out;
  if (!std::filesystem::exists(dir_)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 14 && name.ends_with(".outcomes.json") && name[0] != '.')
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      FindingRecord r;
      r.outcomes = load_json_file(f);
      r.signature = r.outcomes.at("signature").get<std::string>();
      r.case_file = r.outcomes.at("case_file").get<std::string>();
      r.outcomes_file = f.filename().string();
      const std::string name = r.outcomes_file;
      const auto reproduced =
          dir_ /
          (name.substr(0, name.size() - std::string(".outcomes.json").size()) + ".reproduced.json");
      std::error_code ec;
      if (std::filesystem::exists(reproduced, ec)) {
        try {
          r.reproduced = load_json_file(reproduced);
        } catch (const std::exception&) {
          r.reproduced = {{"reproduced", "error"}, {"why", "its result file is unreadable"}};
        }
      }
      out.push_back(std::move(r));
    } catch (const std::exception&) {
      // A file that is not a finding's outcomes: not ours to judge here.
    }
  }
  return out;
}

}  // namespace collfuzz::campaign
