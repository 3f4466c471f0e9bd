#include "harness/report/html_report.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/core/markup_text.h"
#include "harness/report/run_reader.h"
#include "harness/report/svg_chart.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::report {
namespace {

using nlohmann::json;

std::string esc(const std::string& s) { return markup_escape(s); }

std::string str(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", j.get<double>());
    return buf;
  }
  return j.dump();
}

std::string field(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? str(j[key]) : "-";
}

// A JSON value as a collapsible block: its summary says what it holds, the body is indented JSON
// that wraps inside the page.
std::string json_block(const std::string& label, const json& v) {
  if (label == "-") return json_block("", v);  // field() of an absent key
  std::string what;
  if (v.is_object()) {
    std::string keys;
    for (const auto& [k, x] : v.items()) {
      if (keys.size() > 60) {
        keys += ", ...";
        break;
      }
      keys += (keys.empty() ? "" : ", ") + k;
    }
    what = std::to_string(v.size()) + (v.size() == 1 ? " field" : " fields") +
           (keys.empty() ? "" : ": " + keys);
  } else if (v.is_array()) {
    what = std::to_string(v.size()) + (v.size() == 1 ? " item" : " items");
  } else {
    what = "JSON";
  }
  return "<details class=\"json\"><summary>" +
         esc(label.empty() ? what : label + " (" + what + ")") + "</summary><pre>" +
         esc(v.dump(1)) + "</pre></details>";
}

// A table in a container of its own that scrolls sideways if the table is wider than the page.
std::string scrolling(const std::string& table) {
  return "<div class=\"scroll\">" + table + "</div>";
}

std::string read_text(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string series_name(const json& line_or_run, const std::string& fallback) {
  std::string ex;
  if (line_or_run.contains("executors") && line_or_run["executors"].is_array()) {
    for (const auto& e : line_or_run["executors"]) ex += (ex.empty() ? "" : ",") + str(e);
  }
  std::string name = fallback;
  if (line_or_run.contains("shard") && line_or_run["shard"].is_string())
    name = "shard " + line_or_run["shard"].get<std::string>();
  return name + " (" + (ex.empty() ? "reference" : ex) + ")";
}

struct Timelines {
  std::vector<Series> rate;
  std::vector<Series> rules;
  std::vector<Series> executor_rate;   // per run and executor: compared cases/s
  std::vector<Series> executor_rules;  // per run and executor: rules whose cases reached it
};

void add_timeline(Timelines& t, const std::vector<json>& lines, const std::string& fallback) {
  if (lines.empty()) return;
  Series rate{series_name(lines.front(), fallback), {}};
  Series rules{rate.name, {}};
  for (const auto& l : lines) {
    if (!l.contains("seconds") || !l["seconds"].is_number()) continue;
    const double x = l["seconds"].get<double>();
    if (l.contains("cases_per_second") && l["cases_per_second"].is_number())
      rate.points.emplace_back(x, l["cases_per_second"].get<double>());
    if (l.contains("rules_hit") && l["rules_hit"].is_number())
      rules.points.emplace_back(x, l["rules_hit"].get<double>());
  }
  // Per executor (timeline lines with "per_executor"; older campaigns have none).
  const bool one_run = fallback == "this campaign";
  std::map<std::string, std::pair<Series, Series>> per;
  for (const auto& l : lines) {
    if (!l.contains("seconds") || !l["seconds"].is_number()) continue;
    if (!l.contains("per_executor") || !l["per_executor"].is_object()) continue;
    const double x = l["seconds"].get<double>();
    for (const auto& [name, e] : l["per_executor"].items()) {
      if (!e.is_object()) continue;
      auto& [r, u] = per[name];
      if (r.name.empty()) r.name = u.name = one_run ? name : rate.name + ": " + name;
      if (e.contains("compared_per_second") && e["compared_per_second"].is_number())
        r.points.emplace_back(x, e["compared_per_second"].get<double>());
      if (e.contains("rules_hit") && e["rules_hit"].is_number())
        u.points.emplace_back(x, e["rules_hit"].get<double>());
    }
  }
  for (auto& [name, rs] : per) {
    t.executor_rate.push_back(std::move(rs.first));
    t.executor_rules.push_back(std::move(rs.second));
  }
  t.rate.push_back(std::move(rate));
  t.rules.push_back(std::move(rules));
}

std::string summary_table(const json& s) {
  std::string h = "<table class=\"kv\">";
  const auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>";
  };
  const auto json_row = [&](const std::string& k, const json& v) {
    h += "<tr><th>" + esc(k) + "</th><td>" + json_block("", v) + "</td></tr>";
  };
  row("seed", field(s, "seed"));
  std::string ex;
  if (s.contains("executors") && s["executors"].is_array())
    for (const auto& e : s["executors"]) ex += (ex.empty() ? "" : ", ") + str(e);
  row("executors", "reference vs " + (ex.empty() ? std::string("(none)") : ex));
  row("cases run", field(s, "cases"));
  row("seconds", field(s, "seconds"));
  row("cases/s", field(s, "cases_per_second"));
  if (s.contains("coverage") && s["coverage"].is_object())
    row("rule coverage", field(s["coverage"], "rules_hit") + " of " +
                             field(s["coverage"], "rules_total") + " reachable rules");
  row("findings", s.contains("findings") ? std::to_string(s["findings"].size()) : "-");
  // Provenance: every other scalar or small object the summary carries (host, shard, versions).
  static const std::set<std::string> shown = {
      "seed", "executors", "cases",    "seconds", "cases_per_second", "coverage", "findings",
      "runs", "problems",  "this_run", "budget"};
  for (const auto& [k, v] : s.items()) {
    if (shown.count(k)) continue;
    if (v.is_object() || v.is_array())
      json_row(k, v);
    else
      row(k, str(v));
  }
  return scrolling(h + "</table>");
}

std::string outcome_mix(const json& cov) {
  std::vector<Bar> bars;
  if (cov.contains("outcome_kinds") && cov["outcome_kinds"].is_object()) {
    for (const auto& [profile, kinds] : cov["outcome_kinds"].items()) {
      Bar b{profile, {}};
      if (kinds.is_object())
        for (const auto& [k, n] : kinds.items())
          b.parts.emplace_back(k, n.is_number() ? n.get<double>() : 0.0);
      bars.push_back(std::move(b));
    }
  }
  return stacked_bars("Outcome mix per profile (share of cases)", bars);
}

std::string coverage_heat_map(const json& s) {
  const json& cov = s["coverage"];
  if (!cov.contains("rules") || !cov["rules"].is_object()) return "<p>No rule coverage.</p>";
  std::vector<std::string> rows;
  std::vector<std::string> columns = {"mosaic", "interpret"};
  const bool per_run = s.contains("runs") && s["runs"].is_array() && s["runs"].size() > 1;
  if (per_run) {
    for (const auto& r : s["runs"]) {
      std::string name =
          r.contains("shard") && r["shard"].is_object()
              ? "shard " + field(r["shard"], "index") + "/" + field(r["shard"], "count")
              : field(r, "dir");
      columns.push_back(name);
    }
  }
  std::vector<std::vector<double>> values;
  for (const auto& [rule, n] : cov["rules"].items()) {
    rows.push_back(rule);
    std::vector<double> v;
    for (const char* p : {"mosaic", "interpret"})
      v.push_back(n.contains(p) && n[p].is_number() ? n[p].get<double>() : 0.0);
    if (per_run) {
      for (const auto& r : s["runs"]) {
        const json& rc = r.contains("rule_counts") ? r["rule_counts"] : json::object();
        v.push_back(rc.contains(rule) && rc[rule].is_number() ? rc[rule].get<double>() : 0.0);
      }
    }
    values.push_back(std::move(v));
  }
  return heat_map(per_run ? "Rule coverage: how often each rule fired, per profile and per run"
                          : "Rule coverage: how often each rule fired, per profile",
                  rows, columns, values);
}

std::string shard_breakdown(const json& s) {
  if (!s.contains("runs") || !s["runs"].is_array()) return "";
  std::string h =
      "<h2>Runs merged (per shard)</h2><div "
      "class=\"scroll\"><table><tr><th>run</th><th>host</th><th>shard</th>"
      "<th>seed</th><th>cases</th><th>cases/s</th><th>rules hit</th><th>findings</th>"
      "<th>provenance</th></tr>";
  std::vector<Bar> bars;
  static const std::set<std::string> shown = {
      "dir",       "host",     "shard",       "seed",          "cases",    "cases_per_second",
      "rules_hit", "findings", "rule_counts", "outcome_kinds", "timeline", "rules_total"};
  for (const auto& r : s["runs"]) {
    const std::string shard = r.contains("shard") && r["shard"].is_object()
                                  ? field(r["shard"], "index") + "/" + field(r["shard"], "count")
                                  : "-";
    // Scalars as key=value, an object or array as a collapsible JSON block.
    std::string extra;
    for (const auto& [k, v] : r.items()) {
      if (shown.count(k)) continue;
      if (v.is_object() || v.is_array())
        extra += json_block(k, v);
      else
        extra += "<span class=\"pv\">" + esc(k + "=" + str(v)) + "</span> ";
    }
    h += "<tr><td>" + esc(field(r, "dir")) + "</td><td>" + esc(field(r, "host")) + "</td><td>" +
         esc(shard) + "</td><td>" + esc(field(r, "seed")) + "</td><td>" + esc(field(r, "cases")) +
         "</td><td>" + esc(field(r, "cases_per_second")) + "</td><td>" +
         esc(field(r, "rules_hit")) + "</td><td>" + esc(field(r, "findings")) +
         "</td><td class=\"small prov\">" + extra + "</td></tr>";
    Bar b{"shard " + shard, {}};
    if (r.contains("outcome_kinds") && r["outcome_kinds"].is_object()) {
      std::map<std::string, double> kinds;
      for (const auto& [p, ks] : r["outcome_kinds"].items())
        if (ks.is_object())
          for (const auto& [k, n] : ks.items()) kinds[k] += n.is_number() ? n.get<double>() : 0;
      for (const auto& [k, n] : kinds) b.parts.emplace_back(k, n);
    }
    bars.push_back(std::move(b));
  }
  h += "</table></div>";
  h += stacked_bars("Outcome mix per shard (both profiles)", bars);
  return h;
}

std::string finding_groups(const json& s, const std::filesystem::path& dir,
                           const RunDirectory& run) {
  if (!s.contains("findings") || !s["findings"].is_array() || s["findings"].empty())
    return "<h2>Findings</h2><p>None.</p>";
  std::map<std::string, const FindingFiles*> files;
  for (const auto& f : run.findings) files[f.signature] = &f;
  std::map<std::string, std::vector<json>> groups;
  for (const auto& f : s["findings"]) {
    const std::string group = f.contains("group") ? str(f["group"]) : field(f, "signature");
    groups[group].push_back(f);
  }
  std::string h = "<h2>Finding groups</h2>";
  for (const auto& [group, members] : groups) {
    h += "<section class=\"group\"><h3>" + esc(group) + "</h3>";
    for (const auto& f : members) {
      const std::string sig = field(f, "signature");
      const json& size = f.contains("size") ? f["size"] : json::object();
      h += "<div class=\"finding\"><p><code>" + esc(sig) +
           "</code>: " + esc(field(f, "occurrences")) + " occurrences; smallest case <a href=\"" +
           esc(field(f, "case_file")) + "\">" + esc(field(f, "case_file")) + "</a> (" +
           esc(field(size, "ops")) + " ops, " + esc(field(size, "ctas")) + " CTAs, " +
           esc(field(size, "elements")) + " elements" +
           (f.value("shrunk", false) ? "" : ", not shrunk") + "), found as " +
           esc(f.contains("found") ? field(f["found"], "case") : "-") + "</p>";
      if (f.contains("reproduced"))
        h += "<p>Its repro script, run once by the campaign: <b>" + esc(field(f, "reproduced")) +
             "</b> (" + esc(field(f, "reproduced_why")) + ")</p>";
      const auto it = files.find(sig);
      if (it == files.end()) {
        h += "<p class=\"warn\">Its files are not in " + esc(dir.string()) + ".</p></div>";
        continue;
      }
      const json& o = it->second->outcomes;
      h += "<h4>The oracles' diff</h4><ul class=\"diff\">";
      if (o.contains("mismatches") && o["mismatches"].is_array())
        for (const auto& m : o["mismatches"])
          h += "<li><code>" + esc(field(m, "signature")) + "</code>: " + esc(field(m, "detail")) +
               "</li>";
      h += "</ul><div class=\"scroll\"><table "
           "class=\"outcomes\"><tr><th>side</th><th>outcome</th></tr>";
      if (o.contains("reference") && o["reference"].is_object())
        for (const auto& [p, out] : o["reference"].items())
          h += "<tr><td>reference (" + esc(p) + ")</td><td>" + json_block(field(out, "kind"), out) +
               "</td></tr>";
      if (o.contains("executors") && o["executors"].is_array())
        for (const auto& e : o["executors"])
          h += "<tr><td>" + esc(field(e, "executor")) + "</td><td>" +
               (e.contains("outcome") ? json_block(field(e["outcome"], "kind"), e["outcome"])
                                      : std::string("-")) +
               "</td></tr>";
      h += "</table></div><details><summary>Case file</summary><pre>" +
           esc(read_text(it->second->case_file)) + "</pre></details>";
      if (it->second->python_file) {
        h += "<details open><summary>Python reproducer (" +
             esc(it->second->python_file->filename().string()) + ")</summary><pre>" +
             esc(read_text(*it->second->python_file)) + "</pre></details>";
      }
      h += "</div>";
    }
    h += "</section>";
  }
  return h;
}

// Nothing may be wider than the page: long tokens (signatures, paths, JSON) break anywhere, a
// table or chart wider than the page scrolls inside its own container.
const char* const kStyle = R"(
body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}
h1,h2,h3,h4,p,li,summary,code{overflow-wrap:anywhere}td,th{overflow-wrap:break-word}
table.kv td,td.prov,table.outcomes td+td{overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;
text-align:left;vertical-align:top}pre{white-space:pre-wrap;overflow-wrap:anywhere;
max-height:24em;overflow:auto;background:#f6f6f6;padding:6px;margin:0}
details.json summary{cursor:pointer;color:#444;font-size:90%}.prov .pv{display:block}
.small{font-size:80%}.warn{color:#a00}
.group{border-left:4px solid #d62728;padding-left:1em;margin:1em 0}svg.chart{display:block;
margin:1em 0}#status{color:#888;font-size:80%})";

// Only checks the page (no data, no network): every chart has drawn content.
const char* const kCheckScript = R"(<script>
(function(){var c=document.querySelectorAll('svg.chart'),ok=c.length>0;
for(var i=0;i<c.length;i++){if(c[i].querySelectorAll('rect,polyline,circle').length<2)ok=false;}
document.getElementById('status').textContent=ok?'charts-ok '+c.length:'charts-missing';})();
</script>)";

}  // namespace

std::string html_report(const std::filesystem::path& dir, std::vector<std::string>* problems) {
  RunDirectory run = read_run_directory(dir);
  if (problems) *problems = run.problems;
  json s = run.summary.value_or(json::object());
  if (!s.contains("coverage") || !s["coverage"].is_object()) s["coverage"] = json::object();
  const bool merged = s.contains("runs") && s["runs"].is_array();

  Timelines t;
  if (merged) {
    for (const auto& r : s["runs"]) {
      if (!r.contains("timeline") || !r["timeline"].is_string()) continue;
      const auto rel = std::filesystem::path(r["timeline"].get<std::string>());
      if (rel.is_absolute() || rel.string().find("..") != std::string::npos) continue;
      add_timeline(t, read_jsonl(dir / rel), field(r, "dir"));
    }
  } else {
    add_timeline(t, run.timeline, "this campaign");
  }

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
  h += "<title>collfuzz report: " + esc(dir.filename().string()) + "</title><style>" + kStyle +
       "</style></head><body>";
  h += std::string("<h1>collfuzz ") + (merged ? "merged " : "") + "campaign report</h1>";
  h += "<p>Directory: <code>" + esc(dir.string()) + "</code>. " +
       (run.summary ? "" : "<span class=\"warn\">No readable summary.json.</span>") + "</p>";
  h += summary_table(s);
  h += "<h2>Throughput and coverage over time</h2>";
  if (t.rate.empty())
    h += "<p class=\"warn\">No timeline.jsonl: the campaign predates timelines.</p>";
  h += line_chart("Cases per second, per run and executor set", "seconds", "cases/s", t.rate);
  h += line_chart("Rules hit (cumulative), per run and executor set", "seconds", "rules hit",
                  t.rules);
  if (!t.executor_rate.empty()) {
    h += line_chart("Cases compared with the reference per second, per executor", "seconds",
                    "compared/s", t.executor_rate);
    h += line_chart("Rules whose cases reached each executor (cumulative, this run)", "seconds",
                    "rules", t.executor_rules);
  }
  h += "<h2>Outcome mix</h2>" + outcome_mix(s["coverage"]);
  h += "<h2>Rule coverage</h2>" + scrolling(coverage_heat_map(s));
  if (merged) h += shard_breakdown(s);
  h += finding_groups(s, dir, run);
  if (!run.problems.empty()) {
    h += "<h2>Files skipped</h2><ul>";
    for (const auto& p : run.problems) h += "<li>" + esc(p) + "</li>";
    h += "</ul>";
  }
  h += "<p id=\"status\">charts-unchecked</p>";
  h += kCheckScript;
  h += "</body></html>\n";
  return h;
}

std::vector<std::string> write_html_report(const std::filesystem::path& dir,
                                           const std::filesystem::path& out) {
  std::vector<std::string> problems;
  write_file_atomically(out, html_report(dir, &problems));
  return problems;
}

}  // namespace collfuzz::report
