// Every finding gets a JAX script beside its case (docs/python.md): SIGNATURE.py (the reproducer
// that `collfuzz report` embeds and `merge` carries), written by
// `collfuzz repro`'s generator for the mode of the executor that disagreed (jax-interpret:
// interpret; jax-lower: lower; jax-gpu, sim, cuda and the rest: gpu). When no script can be
// written (no JAX venv, a case the generator cannot write), SIGNATURE.repro.txt says why instead.
// Never throws: a campaign never fails for want of a script.
#pragma once

#include <filesystem>
#include <string>

#include "harness/core/case.h"

namespace collfuzz::campaign {

void write_finding_repro(const std::filesystem::path& dir, const std::string& stem,
                         const std::string& signature, const Case& c);

}  // namespace collfuzz::campaign
