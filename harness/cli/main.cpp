// collfuzz: fuzzing and property testing of Pallas Mosaic GPU's collective allocations and copies.
#include <CLI/CLI.hpp>
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/build_info.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"

int main(int argc, char** argv) {
  using namespace collfuzz;
  using namespace collfuzz::cli;
  CLI::App app{
      "collfuzz: a fuzzing and property-testing harness for the collective memory semantics of "
      "Pallas Mosaic GPU kernels (cluster-collective scoped allocations, collective TMA copies and "
      "their mbarrier byte accounting).\n\nExit codes: 0 ok, 1 a case failed or a finding was "
      "made, or nothing was compared, "
      "2 bad input, 3 internal error."};
  app.require_subcommand(1);
  app.set_version_flag("--version", collfuzz_version_line() + "\nmodels JAX " +
                                        known_jax_versions_list() + " (default " +
                                        to_string(kDefaultJaxVersion) + ")");
  Flags flags;
  std::vector<std::string> cases;
  std::string one_case;

  auto* run = app.add_subcommand(
      "run", "Run cases on the reference (and --executors) and print each outcome");
  run->add_option("cases", cases, "case files ('-': read one case from standard input)")
      ->required();
  add_flags(*run, kRun, flags);

  auto* replay = app.add_subcommand(
      "replay",
      "Replay case files (directories searched recursively); print one line per failure and, last, "
      "'N passed, N failed'");
  replay->add_option("paths", cases, "case files or directories")->required();
  add_flags(*replay, kReplay, flags);

  auto* explain = app.add_subcommand(
      "explain", "List, in order, the rules checked for a case and which one fired");
  explain->add_option("case", one_case, "a case file")->required();
  add_flags(*explain, kExplain, flags);

  auto* rules = app.add_subcommand("rules", "Print the rule table");
  add_flags(*rules, kRules, flags);

  auto* gen = app.add_subcommand(
      "gen", "Print generated cases as JSON lines (--stats: rule and outcome hit rates)");
  add_flags(*gen, kGen, flags);

  auto* fuzz = app.add_subcommand("fuzz",
                                  "Run a fuzzing campaign: generated cases on the reference and "
                                  "every executor; findings shrunk and "
                                  "written to --out; exit 1 if any finding");
  add_flags(*fuzz, kFuzz, flags);

  auto* merge = app.add_subcommand(
      "merge",
      "Merge the finding folders of campaign runs (shards, machines) into --into: findings "
      "deduplicated by signature, smallest case kept, statistics summed, each run's provenance "
      "kept; summary.md, summary.json and report.html written");
  merge->add_option("runs", cases, "campaign (or merged) directories")->required();
  add_flags(*merge, kMerge, flags);

  auto* report = app.add_subcommand(
      "report", "Write one self-contained HTML report (no network access) of a campaign directory");
  report->add_option("out", one_case, "a campaign or merged directory")->required();
  add_flags(*report, kReport, flags);

  auto* repro = app.add_subcommand(
      "repro",
      "Write a case as a standalone JAX script that builds its kernel, runs it in --mode and "
      "asserts the reference's prediction (several cases or a directory: one script each in -o)");
  repro->add_option("cases", cases, "case files or directories")->required();
  add_flags(*repro, kRepro, flags);

  auto* import_cmd = app.add_subcommand(
      "import",
      "Trace a Pallas Mosaic GPU kernel in a Python file into a case (FILE.py[:NAME]: NAME, "
      "default collfuzz_case, a function of no arguments returning (kernel, args[, fills]))");
  import_cmd->add_option("kernel", one_case, "FILE.py or FILE.py:NAME")->required();
  add_flags(*import_cmd, kImport, flags);

  auto* freeze = app.add_subcommand(
      "freeze",
      "Write the reference's prediction into each case's expect (for its JAX release, or --jax), "
      "so that imported kernels and generated cases become regression cases that replay compares");
  freeze->add_option("cases", cases, "case files or directories")->required();
  add_flags(*freeze, kFreeze, flags);

  // A first word that is not a flag names the subcommand: an unknown one is said as such (CLI11
  // would answer "A subcommand is required"). Only the first word: a top-level option's value
  // is not a subcommand.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub :
         {run, replay, explain, rules, gen, fuzz, merge, report, repro, import_cmd, freeze})
      known = known || sub->check_name(argv[1]);
    if (!known) {
      std::cerr << "collfuzz: error: unknown subcommand '" << terminal_text(argv[1])
                << "'; subcommands: ";
      const char* separator = "";
      for (const CLI::App* sub :
           {run, replay, explain, rules, gen, fuzz, merge, report, repro, import_cmd, freeze}) {
        std::cerr << separator << sub->get_name();
        separator = ", ";
      }
      std::cerr << " (collfuzz --help)\n";
      return kExitBadInput;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    // --version: the version on standard output, exit 0 (CLI11 reports it as a parse "error").
    std::cout << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11's messages repeat the values given: escaped, as everything printed here.
    std::cerr << "collfuzz: error: " << terminal_lines(e.what())
              << "\nRun with --help for more information.\n";
    return kExitBadInput;
  }

  try {
    if (*run) return cmd_run(flags, cases);
    if (*replay) return cmd_replay(flags, cases);
    if (*explain) return cmd_explain(flags, one_case);
    if (*rules) return cmd_rules(flags);
    if (*gen) return cmd_gen(flags);
    if (*fuzz) return cmd_fuzz(flags);
    if (*merge) return cmd_merge(flags, cases);
    if (*report) return cmd_report(flags, one_case);
    if (*repro) return cmd_repro(flags, cases);
    if (*import_cmd) return cmd_import(flags, one_case);
    if (*freeze) return cmd_freeze(flags, cases);
  } catch (const InputError& e) {
    std::cerr << "collfuzz: error: " << terminal_lines(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "collfuzz: internal error: " << terminal_lines(e.what()) << "\n";
    return kExitInternal;
  }
  return kExitInternal;
}
