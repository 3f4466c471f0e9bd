#include <array>

#include "harness/core/mutants.h"

namespace collfuzz {
namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(Mutant::kCount)> kNames = {
    "none",
    "leader_bytes_not_doubled",
    "mask_pallas_order",
    "chunk_split_wrong_dim",
    "partition_halves_swapped",
    "expect_tx_truncated",
    "predicate_ignored",
    "thread_axis_check_skipped",
    "unknown_axis_list_not_reversed",
    "oob_fill_not_zero",
    "non_leader_barrier_armed",
    "multicast_skips_self",
    "cluster_barrier_count_off_by_one",
    "loop_index_frozen",
    "barrier_slot_shifted",
    "store_reduction_ignored",
    "store_wait_group_off_by_one",
    "commit_smem_dropped",
    "wait_phase_not_flipped",
    "swizzle_load_ignored",
    "iota_uncast_accepted",
    "carry_next_ignored",
    "nd_loop_trips_rounded_up",
    "cluster_cancel_every_cta",
    "cluster_ref_reads_own_smem",
    "cluster_ref_writes_own_smem",
    "tiled_vector_load_unswizzled",
    "transpose_not_inverted",
    "interpret_scoped_check_order",
    "interpret_predicate_accepted",
    "interpret_axes_thread_first",
    "interpret_dealloc_pending_off_by_one",
    "interpret_oob_fill_not_zero",
};

}  // namespace

std::string_view mutant_name(Mutant m) { return kNames[static_cast<std::size_t>(m)]; }

std::optional<Mutant> parse_mutant(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Mutant>(i);
  }
  return std::nullopt;
}

}  // namespace collfuzz
