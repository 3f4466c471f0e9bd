#!/bin/bash
#SBATCH --job-name=collfuzz-nightly
#SBATCH --array=0-7
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=01:30:00
#SBATCH --output=collfuzz-%A_%a.log
# collfuzz nightly as a Slurm job array (docs/scale-out.md). Each array task runs one shard of the
# night's seed: collfuzz reads SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT itself (relative to
# SLURM_ARRAY_TASK_MIN). Then a job that depends on the array merges the shards.
#
#   ci/engines/slurm-nightly.sh submit      submits the array and the merge after it (sbatch)
#   sbatch ci/engines/slurm-nightly.sh      the array alone (each task: `fuzz`)
#   ci/engines/slurm-nightly.sh merge       the merge (the dependent job runs this)
#
# Settings (environment): COLLFUZZ (the binary; default: collfuzz on PATH), RESULTS (a shared
# directory; default: ./collfuzz-results), SEED (default: today, UTC), FUZZ_SECONDS (default 3600),
# FUZZ_CASES (a case budget instead, for a dry run), EXECUTORS (default: sim,cuda), SBATCH
# (default: sbatch; `echo` prints what would be submitted).
set -uo pipefail
collfuzz=${COLLFUZZ:-collfuzz}
results=${RESULTS:-$PWD/collfuzz-results}
seed=${SEED:-$(date -u +%Y%m%d)}
executors=${EXECUTORS:-sim,cuda}
sbatch=${SBATCH:-sbatch}
mode=${1:-fuzz}

case "$mode" in
  submit)
    array=$($sbatch --parsable --export=ALL,SEED="$seed",RESULTS="$results" "$0" fuzz) || exit 1
    $sbatch --dependency="afterany:${array%%;*}" --job-name=collfuzz-merge --gres=gpu:0 \
      --ntasks=1 --time=00:20:00 --export=ALL,SEED="$seed",RESULTS="$results" "$0" merge
    ;;
  fuzz)
    : "${SLURM_ARRAY_TASK_ID:?run this as a Slurm array task (or set SLURM_ARRAY_TASK_ID)}"
    budget=(--seconds "${FUZZ_SECONDS:-3600}")
    [ -n "${FUZZ_CASES:-}" ] && budget=(--cases "$FUZZ_CASES")
    mkdir -p "$results/$seed"
    "$collfuzz" fuzz --executors "$executors" --seed "$seed" "${budget[@]}" \
      --jobs "${SLURM_CPUS_PER_TASK:-1}" --out "$results/$seed/shard-$SLURM_ARRAY_TASK_ID"
    status=$?
    [ "$status" -le 1 ]  # 1: findings made (the merge reports them)
    ;;
  merge)
    "$collfuzz" merge "$results/$seed"/shard-* --into "$results/$seed/merged"
    status=$?
    [ "$status" -le 1 ] && echo "merged: $results/$seed/merged/summary.md, report.html"
    ;;
  *)
    echo "usage: $0 [submit|fuzz|merge]" >&2
    exit 2
    ;;
esac
