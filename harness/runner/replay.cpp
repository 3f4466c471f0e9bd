#include "harness/runner/replay.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "harness/core/build_info.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/markup_text.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz {

bool is_case_file_name(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return name.ends_with(".json") && !name.starts_with(".") && !name.ends_with(".outcomes.json") &&
         !name.ends_with(".reproduced.json");
}

namespace {

std::string error_text(const std::error_code& ec) { return "cannot read it: " + ec.message(); }

// The case files under `dir`, recursively; an entry that cannot be read is bad input.
std::vector<std::filesystem::path> case_files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec);
  if (ec) throw InputError(dir.string(), error_text(ec));
  for (const std::filesystem::recursive_directory_iterator end; it != end;) {
    // A copy: a failed increment leaves the iterator at its end, and *it no longer valid.
    const std::filesystem::path path = it->path();
    const bool regular = it->is_regular_file(ec);
    if (ec) throw InputError(path.string(), error_text(ec));
    if (regular && is_case_file_name(path)) found.push_back(path);
    it.increment(ec);
    if (ec) throw InputError(path.string(), error_text(ec));
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<std::filesystem::path> collect_case_files(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (p.empty()) throw InputError("\"\"", "an empty path");
    if (std::filesystem::is_directory(p, ec)) {
      const auto found = case_files_under(p);
      if (found.empty()) {
        throw InputError(p, "the directory holds no case file (*.json, not *.outcomes.json)");
      }
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(p, ec)) {
      files.emplace_back(p);
    } else {
      throw InputError(p, ec ? error_text(ec) : "no such file or directory");
    }
  }
  return files;
}

namespace {

CheckResult verdict_check(const CaseReport& r, const Verdict& v,
                          const std::vector<std::string>& known, double seconds) {
  CheckResult c{r.file, r.name, v.executor, CheckResult::Status::kPass, "", "", seconds, {},
                "",     "",     ""};
  if (!v.ran) {
    c.status = CheckResult::Status::kSkip;
    c.message = v.reason;
    return c;
  }
  std::set<std::string> seen;
  std::vector<const Mismatch*> unexpected;
  for (const Mismatch& m : v.mismatches) {
    seen.insert(m.signature);
    if (std::find(known.begin(), known.end(), m.signature) == known.end()) unexpected.push_back(&m);
  }
  for (const Mismatch* m : unexpected) c.signatures.push_back(m->signature);
  if (!unexpected.empty()) {
    c.status = CheckResult::Status::kFail;
    c.signature = unexpected.front()->signature;
    c.message = unexpected.front()->signature + ": " + unexpected.front()->detail;
    if (unexpected.size() > 1)
      c.message += " (+" + std::to_string(unexpected.size() - 1) + " more)";
    return c;
  }
  for (const auto& k : known) {
    if (!seen.count(k)) {
      c.status = CheckResult::Status::kFail;
      c.signature = k;
      c.signatures.push_back("stale:" + k);
      c.message = "listed divergence no longer happens: " + k + " (update the baseline)";
      return c;
    }
  }
  return c;
}

}  // namespace

void classify(const CaseReport& report, ReplaySummary& summary) {
  auto push = [&](CheckResult c) {
    switch (c.status) {
      case CheckResult::Status::kPass:
        ++summary.passed;
        break;
      case CheckResult::Status::kFail:
        ++summary.failed;
        break;
      case CheckResult::Status::kSkip:
        ++summary.skipped;
        break;
    }
    summary.checks.push_back(std::move(c));
  };
  if (report.stored) {
    push(verdict_check(report, *report.stored, {}, 0));
  } else if (!report.stored_skip_reason.empty()) {
    push(CheckResult{report.file,
                     report.name,
                     "reference",
                     CheckResult::Status::kSkip,
                     report.stored_skip_reason,
                     "",
                     0,
                     {},
                     "",
                     "",
                     ""});
  }
  for (const ExecutorResult& r : report.results) {
    CheckResult c = verdict_check(report, r.verdict, r.known, r.seconds);
    c.jax_version = r.jax_version;
    c.judged_jax = r.judged_jax;
    if (const std::string v = executor_versions(r.outcome); !v.empty())
      summary.executor_versions[r.executor] = v;
    push(std::move(c));
  }
  for (const ExecutorResult& r : report.also) {
    CheckResult c = verdict_check(report, r.verdict, r.known, r.seconds);
    c.jax_version = r.jax_version;
    c.judged_jax = r.judged_jax;
    c.also_profile = report.also_profile;
    ++(c.status == CheckResult::Status::kPass   ? summary.also_passed
       : c.status == CheckResult::Status::kFail ? summary.also_failed
                                                : summary.also_skipped);
    summary.also_checks.push_back(std::move(c));
  }
}

ReplaySummary ReplaySummary::also_summary() const {
  ReplaySummary s;
  s.checks = also_checks;
  s.passed = also_passed;
  s.failed = also_failed;
  s.skipped = also_skipped;
  s.executor_versions = executor_versions;
  return s;
}

std::string executor_versions(const Outcome& o) {
  std::string out;
  for (const char* key : {"jax_version", "jaxlib_version", "cuda_driver_version"}) {
    auto it = o.info.find(key);
    if (it == o.info.end() || it->second.empty() || it->second == "null") continue;
    if (!out.empty()) out += ", ";
    out += std::string(key).substr(0, std::string(key).size() - 8) + " " + it->second;
  }
  return out;
}

namespace {

// One file replayed: its report's checks (or the parse failure), classified into a summary of
// their own, so that files replayed on different threads can be folded in file order.
ReplaySummary replay_file(const std::filesystem::path& file, CaseRunner& runner) {
  ReplaySummary one;
  try {
    nlohmann::json expect;
    const Case c = load_case_file(file, &expect);
    const CaseReport report = runner.run(c, &expect, file.string());
    one.counts.add(report);
    classify(report, one);
  } catch (const InputError& e) {
    one.bad_input = true;
    ++one.failed;
    one.checks.push_back(CheckResult{file.string(),
                                     file.stem().string(),
                                     "parse",
                                     CheckResult::Status::kFail,
                                     e.what(),
                                     "input:bad_case",
                                     0,
                                     {},
                                     "",
                                     "",
                                     ""});
  }
  return one;
}

void fold(ReplaySummary&& one, ReplaySummary& summary,
          const std::function<void(const CheckResult&)>& on_check) {
  summary.passed += one.passed;
  summary.failed += one.failed;
  summary.skipped += one.skipped;
  summary.bad_input = summary.bad_input || one.bad_input;
  summary.counts.merge(one.counts);
  for (auto& [executor, versions] : one.executor_versions)
    summary.executor_versions[executor] = std::move(versions);
  for (CheckResult& c : one.checks) {
    on_check(c);
    summary.checks.push_back(std::move(c));
  }
  summary.also_passed += one.also_passed;
  summary.also_failed += one.also_failed;
  summary.also_skipped += one.also_skipped;
  for (CheckResult& c : one.also_checks) {
    on_check(c);
    summary.also_checks.push_back(std::move(c));
  }
}

}  // namespace

ReplaySummary replay(const std::vector<std::filesystem::path>& files, CaseRunner& runner,
                     const std::function<void(const CheckResult&)>& on_check) {
  ReplaySummary summary;
  for (const auto& file : files) fold(replay_file(file, runner), summary, on_check);
  return summary;
}

ReplaySummary replay_parallel(const std::vector<std::filesystem::path>& files,
                              const std::vector<CaseRunner*>& runners,
                              const std::function<void(const CheckResult&)>& on_check) {
  if (runners.size() <= 1 || files.size() <= 1) return replay(files, *runners.at(0), on_check);
  ReplaySummary summary;
  std::mutex mutex;
  std::vector<std::optional<ReplaySummary>> done(files.size());
  std::size_t next_file = 0;    // the next file a thread takes
  std::size_t next_report = 0;  // the first file not yet folded into `summary`
  std::exception_ptr failure;   // the first internal error; the other threads stop taking files
  auto work = [&](CaseRunner& runner) {
    for (;;) {
      std::size_t i = 0;
      {
        const std::lock_guard lock(mutex);
        if (failure || next_file == files.size()) return;
        i = next_file++;
      }
      std::optional<ReplaySummary> one;
      try {
        one = replay_file(files[i], runner);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        return;
      }
      const std::lock_guard lock(mutex);
      done[i] = std::move(one);
      while (next_report < files.size() && done[next_report]) {
        fold(std::move(*done[next_report]), summary, on_check);
        done[next_report].reset();
        ++next_report;
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    threads.reserve(runners.size());
    for (CaseRunner* r : runners) threads.emplace_back(work, std::ref(*r));
  }
  if (failure) std::rethrow_exception(failure);
  return summary;
}

void write_junit(const ReplaySummary& summary, const std::filesystem::path& file) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  double total = 0;
  for (const auto& c : summary.checks) total += c.seconds;
  xml += "<testsuites>\n<testsuite name=\"collfuzz-replay\" tests=\"" +
         std::to_string(summary.checks.size()) + "\" failures=\"" + std::to_string(summary.failed) +
         "\" skipped=\"" + std::to_string(summary.skipped) + "\" time=\"" + std::to_string(total) +
         "\">\n";
  // Provenance: collfuzz's version and commit, and each executor's versions.
  xml += "  <properties>\n";
  xml += "    <property name=\"collfuzz.version\" value=\"" + markup_escape(collfuzz_version()) +
         "\"/>\n";
  xml += "    <property name=\"collfuzz.commit\" value=\"" + markup_escape(collfuzz_commit()) +
         "\"/>\n";
  for (const auto& [executor, versions] : summary.executor_versions) {
    xml += "    <property name=\"executor." + markup_escape(executor) + "\" value=\"" +
           markup_escape(versions) + "\"/>\n";
  }
  xml += "  </properties>\n";
  for (const auto& c : summary.checks) {
    xml += "  <testcase classname=\"" + markup_escape(c.executor) + "\" name=\"" +
           markup_escape(c.case_name) + "\" file=\"" + markup_escape(c.file) + "\" time=\"" +
           std::to_string(c.seconds) + "\"";
    if (c.status == CheckResult::Status::kPass) {
      xml += "/>\n";
      continue;
    }
    xml += ">\n";
    if (c.status == CheckResult::Status::kFail) {
      xml += "    <failure message=\"" + markup_escape(c.signature) + "\">" +
             markup_escape(c.message) + "</failure>\n";
    } else {
      xml += "    <skipped message=\"" + markup_escape(c.message) + "\"/>\n";
    }
    xml += "  </testcase>\n";
  }
  xml += "</testsuite>\n</testsuites>\n";
  write_file_atomically(file, xml);
}

std::vector<std::string> unavailable_lines(const ReplaySummary& summary) {
  std::map<std::string, std::map<std::string, int>> reasons;
  for (const CheckResult& c : summary.checks) {
    if (c.status != CheckResult::Status::kSkip || c.executor == "reference") continue;
    if (c.message.rfind("version mismatch", 0) == 0) continue;
    std::string why = c.message.substr(0, c.message.find('\n'));
    if (why.size() > 100) why = why.substr(0, 100) + "...";
    ++reasons[c.executor][why];
  }
  std::vector<std::string> lines;
  for (const auto& [executor, counts] : reasons) {
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [why, n] : counts) sorted.emplace_back(-n, why);
    std::sort(sorted.begin(), sorted.end());
    std::string line = "unavailable on " + executor + ":";
    for (std::size_t i = 0; i < sorted.size(); ++i)
      line += (i ? "; " : " ") + std::to_string(-sorted[i].first) + "x " + sorted[i].second;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string summary_line(const ReplaySummary& summary) {
  std::string line =
      std::to_string(summary.passed) + " passed, " + std::to_string(summary.failed) + " failed";
  if (summary.skipped) line += ", " + std::to_string(summary.skipped) + " skipped";
  return line;
}

}  // namespace collfuzz
