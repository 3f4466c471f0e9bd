// Every finding gets a JAX script beside its case (docs/python.md): SIGNATURE.py (the reproducer
// that `collfuzz report` embeds and `merge` carries), written by
// `collfuzz repro`'s generator for the mode of the executor that disagreed, one that runs on the
// machine that found it (repro_mode_for). When no script can be
// written (no JAX venv, a case the generator cannot write), SIGNATURE.repro.txt says why instead.
// Never throws: a campaign never fails for want of a script.
#pragma once

#include <filesystem>
#include <string>

#include "harness/core/case.h"
#include "harness/runner/repro_script.h"

namespace collfuzz::campaign {

// The mode of a finding's script: the mode of the JAX executor that disagreed (jax-interpret:
// interpret; jax-lower and jax-ir, both the compiler's lowering on the CPU: lower; jax-gpu and
// cuda: gpu). A finding of an executor that is not JAX (sim, a mutant) gets the compiler's mode
// that runs here: gpu on a machine with a GPU, else interpret (a gpu script on a CPU machine fails
// with "Only interpret mode is supported on CPU backend" and reproduces nothing).
ReproMode repro_mode_for(const std::string& executor, bool machine_has_gpu);

void write_finding_repro(const std::filesystem::path& dir, const std::string& stem,
                         const std::string& signature, const Case& c);

}  // namespace collfuzz::campaign
