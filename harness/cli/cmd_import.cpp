// collfuzz import: a Pallas Mosaic GPU kernel in a Python file traced into a case
// (docs/python.md, "Python in").
#include <filesystem>
#include <iostream>

#include "harness/cli/commands.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/terminal_text.h"
#include "harness/runner/atomic_file.h"
#include "harness/runner/kernel_import.h"

namespace collfuzz::cli {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (const char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

}  // namespace

int cmd_import(const Flags& flags, const std::string& spec) {
  // FILE.py[:NAME]: a last ':' followed by an identifier names the function.
  KernelImportRequest req;
  req.file = spec;
  if (const auto colon = spec.rfind(':'); colon != std::string::npos) {
    const std::string name = spec.substr(colon + 1);
    if (is_identifier(name)) {
      req.file = spec.substr(0, colon);
      req.name = name;
    } else if (!std::filesystem::exists(spec)) {
      throw InputError(spec, "after ':' comes the name of a function in the file, \"" + name +
                                 "\" is not a Python identifier");
    }
  }
  if (!std::filesystem::is_regular_file(req.file))
    throw InputError(req.file, std::filesystem::exists(req.file) ? "not a file" : "no such file");
  req.arch = flags.arch;
  req.profile = flags.profile;
  req.jax = flags.jax;
  const KernelImporter importer(flags.python, "");
  if (const std::string why = importer.unavailable(); !why.empty()) {
    std::cerr << "collfuzz: error: cannot import: " << terminal_text(why) << "\n";
    return kExitInternal;
  }
  const KernelImport got = importer.run(req);
  if (!got.error.empty()) {
    std::cerr << "collfuzz: error: " << terminal_lines(got.error) << "\n";
    return got.bad_input ? kExitBadInput : kExitInternal;
  }
  for (const auto& w : got.warnings) std::cerr << "collfuzz: warning: " << terminal_text(w) << "\n";
  Case c;
  try {
    c = case_from_json(got.case_json);
  } catch (const InputError& e) {
    throw InputError(req.file, std::string("the kernel is outside the case format: ") + e.what());
  }
  const std::string text = case_to_json(c).dump(2) + "\n";
  if (flags.output.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(flags.output, text);
    std::cerr << "case written to " << terminal_text(flags.output) << "\n";
  }
  return kExitOk;
}

}  // namespace collfuzz::cli
