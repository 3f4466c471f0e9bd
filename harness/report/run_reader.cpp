#include "harness/report/run_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace collfuzz::report {

std::optional<nlohmann::json> read_json_file(const std::filesystem::path& file,
                                             std::string& error) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    error = "cannot be read";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    error = std::string("not valid JSON (a partial copy?): ") + e.what();
    return std::nullopt;
  }
}

namespace {

std::int64_t size_field(const nlohmann::json& o, const char* key) {
  const auto& s = o.contains("size") && o["size"].is_object() ? o["size"] : nlohmann::json{};
  return s.contains(key) && s[key].is_number_integer() ? s[key].get<std::int64_t>() : 0;
}

}  // namespace

RunDirectory read_run_directory(const std::filesystem::path& dir) {
  RunDirectory run;
  run.dir = dir;
  std::string error;
  const auto summary_file = dir / "summary.json";
  if (!std::filesystem::exists(summary_file)) {
    run.problems.push_back(summary_file.string() + ": missing");
  } else if (auto s = read_json_file(summary_file, error)) {
    if (s->is_object() && s->contains("cases") && (*s)["cases"].is_number_integer() &&
        s->contains("coverage") && (*s)["coverage"].is_object()) {
      run.summary = std::move(*s);
    } else {
      run.problems.push_back(summary_file.string() + ": not a collfuzz summary");
    }
  } else {
    run.problems.push_back(summary_file.string() + ": " + error);
  }

  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir / "findings", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 14 && name.ends_with(".outcomes.json") && name[0] != '.')
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto o = read_json_file(f, error);
    if (!o) {
      run.problems.push_back(f.string() + ": " + error);
      continue;
    }
    if (!o->is_object() || !o->contains("signature") || !(*o)["signature"].is_string() ||
        !o->contains("case_file") || !(*o)["case_file"].is_string()) {
      run.problems.push_back(f.string() + ": not a finding's outcomes (no signature or case_file)");
      continue;
    }
    FindingFiles ff;
    ff.signature = (*o)["signature"].get<std::string>();
    ff.group = o->contains("group") && (*o)["group"].is_string() ? (*o)["group"].get<std::string>()
                                                                 : ff.signature;
    ff.outcomes_file = f;
    const std::string case_name = (*o)["case_file"].get<std::string>();
    if (case_name.find('/') != std::string::npos || case_name.starts_with(".")) {
      run.problems.push_back(f.string() + ": case_file '" + case_name + "' is not a file name");
      continue;
    }
    ff.case_file = f.parent_path() / case_name;
    std::string case_error;
    if (!read_json_file(ff.case_file, case_error)) {
      run.problems.push_back(ff.case_file.string() + ": " + case_error);
      continue;
    }
    auto py = ff.case_file;
    py.replace_extension(".py");
    if (std::filesystem::exists(py)) ff.python_file = py;
    const std::string outcomes_name = f.filename().string();
    const auto reproduced =
        f.parent_path() /
        (outcomes_name.substr(0, outcomes_name.size() - std::string(".outcomes.json").size()) +
         ".reproduced.json");
    if (std::filesystem::exists(reproduced)) {
      std::string reproduced_error;
      if (auto r = read_json_file(reproduced, reproduced_error); r && r->is_object()) {
        ff.reproduced_file = reproduced;
        ff.reproduced = std::move(*r);
      } else {
        run.problems.push_back(reproduced.string() + ": " +
                               (r ? std::string("not an object") : reproduced_error));
        ff.reproduced = {{"reproduced", "error"}, {"why", "its result file is unreadable"}};
      }
    }
    ff.ops = size_field(*o, "ops");
    ff.ctas = size_field(*o, "ctas");
    ff.elements = size_field(*o, "elements");
    ff.outcomes = std::move(*o);
    run.findings.push_back(std::move(ff));
  }

  run.timeline = read_jsonl(dir / "timeline.jsonl");
  return run;
}

std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      auto j = nlohmann::json::parse(line);
      if (j.is_object()) out.push_back(std::move(j));
    } catch (const nlohmann::json::exception&) {
      // The last line of a campaign killed while appending: skipped.
    }
  }
  return out;
}

}  // namespace collfuzz::report
