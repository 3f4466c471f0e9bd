// `collfuzz report`: one self-contained HTML page of a campaign directory or a merged one, with
// no network access (inline SVG drawn in C++, a few lines of inline script that only check the
// page): cases/s and cumulative rule coverage over time per run and executor set (from
// timeline.jsonl, or timelines/*.jsonl of a merge), the outcome mix per profile, rule coverage as
// a heat map (per profile, and per run for a merge), the finding groups with their smallest
// cases, the oracles' diff and the Python reproducer when one lies beside the case, and for a
// merge the per-shard breakdown. Every string from the files is HTML-escaped.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace collfuzz::report {

// The page's HTML, and the input files skipped (partial or corrupt).
std::string html_report(const std::filesystem::path& dir, std::vector<std::string>* problems);

// Writes html_report(dir) to `out` atomically; returns the files skipped.
std::vector<std::string> write_html_report(const std::filesystem::path& dir,
                                           const std::filesystem::path& out);

}  // namespace collfuzz::report
