// Names for the kind of op a disagreement is about, used in signatures: the copy mode of the
// copies that write a buffer or arm a barrier.
#pragma once

#include <string>

#include "harness/core/case.h"

namespace collfuzz {

// "copy_partitioned", "copy_replicated", "copy_multicast", "copy" (plain), for one copy op.
std::string copy_mode(const CopyGmemToSmem& cp);
// The copy mode of the copies that write `buffer`, or that use barrier `barrier`; the most
// specific mode wins when several copies do; "try_cluster_cancel" when no copy but a
// try_cluster_cancel uses the barrier, "barrier_arrive" when neither does.
std::string op_kind_for_buffer(const Case& c, const std::string& buffer);
std::string op_kind_for_barrier(const Case& c, const std::string& barrier);

}  // namespace collfuzz
