// The ids of the rules (oracles/reference/rules.def) whose diagnostics the lowering raises. Only
// the id strings are shared with the reference checker; the checks and the messages are the
// lowering's own, written from JAX's source. tests/sim/rule_ids_test.cpp checks that every id
// here names a rule of the table.
#pragma once

#include <string_view>

namespace collfuzz::lowering::rule_id {

inline constexpr std::string_view kMeshClusterRank = "mesh.cluster.rank";
inline constexpr std::string_view kMeshGridNames = "mesh.grid_names.length";
inline constexpr std::string_view kMeshClusterNames = "mesh.cluster_names.length";
inline constexpr std::string_view kMeshThreadsBoth = "mesh.threads.both_or_none";
inline constexpr std::string_view kMeshThreadsMax = "mesh.threads.max";
inline constexpr std::string_view kNumArrivals = "alloc.barrier.num_arrivals";
inline constexpr std::string_view kTmemNarrow = "alloc.tmem.narrow_dtype";
inline constexpr std::string_view kTmemRank = "alloc.tmem.rank";
inline constexpr std::string_view kTmemRows = "alloc.tmem.rows";
inline constexpr std::string_view kSwizzleValue = "alloc.smem.swizzle_value";
inline constexpr std::string_view kTilingDivides = "alloc.smem.tiling_divides";
inline constexpr std::string_view kSwizzleMinor = "alloc.smem.swizzle_minor_dim";
inline constexpr std::string_view kSmemSliceTile = "lower.smem.slice_tile_aligned";
inline constexpr std::string_view kGmemTiling = "launch_context.gmem_tiling";
inline constexpr std::string_view kLeaderNeedsAxes = "copy.leader_tracked.needs_collective_axes";
inline constexpr std::string_view kCopyDtype = "copy.dtype_mismatch";
inline constexpr std::string_view kUnboundAxis = "copy.partitioned.unbound_axis";
inline constexpr std::string_view kSrcShape = "copy.src_shape";
inline constexpr std::string_view kTransposeRefMemorySpace = "trace.transpose_ref.memory_space";
inline constexpr std::string_view kArriveAndWaitMissing = "barrier.arrive_and_wait.missing";
inline constexpr std::string_view kWaitSmemToGmemN = "trace.wait_smem_to_gmem.n";
inline constexpr std::string_view kNdLoopTilingLength = "trace.nd_loop.tiling_length";
inline constexpr std::string_view kNdLoopTilingDivides = "trace.nd_loop.tiling_divides";
inline constexpr std::string_view kVectorPointwise8Bit = "lower.vector.pointwise_8bit";
inline constexpr std::string_view kVectorIncompatibleLayouts = "lower.vector.incompatible_layouts";
inline constexpr std::string_view kVectorStridedElements = "lower.vector.strided_elements";
inline constexpr std::string_view kLayoutInference = "dialect.vector.layout_inference";
inline constexpr std::string_view kVectorBroadcastLayout = "lower.vector.broadcast_layout";
inline constexpr std::string_view kDialectBroadcastLayout = "dialect.vector.broadcast_layout";
inline constexpr std::string_view kVectorStridedBroadcast = "lower.vector.strided_broadcast";
inline constexpr std::string_view kCopyDivisibilityAssert =
    "dialect.async_copy.divisibility_assert";
inline constexpr std::string_view kCopyProveDivisibility = "dialect.async_copy.prove_divisibility";
inline constexpr std::string_view kCopyTilingDivides = "dialect.async_copy.tiling_divides";
inline constexpr std::string_view kCopyTransposeTiledDims =
    "dialect.async_copy.transpose_tiled_dims";
inline constexpr std::string_view kSplatStoreCount = "dialect.vector.splat_store_count";
inline constexpr std::string_view kSplatVecSize = "lower.vector.splat_vec_size";
inline constexpr std::string_view kTilingWithoutSwizzle = "lower.vector.tiling_without_swizzle";
inline constexpr std::string_view kSwizzleStrided = "lower.vector.swizzle_strided";
inline constexpr std::string_view kTilingRank = "lower.vector.tiling_rank";
inline constexpr std::string_view kWgmmaTiling = "lower.vector.wgmma_tiling";
inline constexpr std::string_view kTiledStoreLayout = "lower.vector.tiled_store_layout";
inline constexpr std::string_view kGmemTransferPlan = "lower.vector.gmem_transfer_plan";
inline constexpr std::string_view kGmemOptimized = "dialect.vector.gmem_optimized";
inline constexpr std::string_view kIotaLayout = "lower.vector.iota_layout";
inline constexpr std::string_view kIotaUncast = "lower.vector.iota_uncast";
inline constexpr std::string_view kLoopCarryLayout = "lower.loop.carry_layout";
inline constexpr std::string_view kEstimateClusterAxis = "estimate.cluster_barrier.unknown_axis";
inline constexpr std::string_view kEstimateSemaphore = "estimate.semaphore.scope";
inline constexpr std::string_view kEstimateGmem = "estimate.gmem.unsupported";
inline constexpr std::string_view kPallasCall = "module.pallas_call.no_lowering_rule";
inline constexpr std::string_view kTmemMixed = "module.tmem.mixed";
inline constexpr std::string_view kSmemCapacity = "module.smem.capacity";
inline constexpr std::string_view kLeaderOneDim = "module.cluster_barrier.leader_one_dim";
inline constexpr std::string_view kLeaderUngrouped = "module.cluster_barrier.leader_ungrouped";
inline constexpr std::string_view kBarrierMax32 = "module.barrier.max_32";
inline constexpr std::string_view kTmemOddCluster = "module.tmem.collective_odd_cluster";
inline constexpr std::string_view kScopedOnlyThread = "lower.scoped.only_thread_collective";
inline constexpr std::string_view kAccCollective = "lower.scoped.acc_collective";
inline constexpr std::string_view kAccUnsigned = "lower.scoped.acc_unsigned";
inline constexpr std::string_view kMultithreaded = "lower.scoped.multithreaded_needs_collective";
inline constexpr std::string_view kCopyUnknownAxis = "lower.copy.unknown_cluster_axis";
inline constexpr std::string_view kIntegerBytes = "lower.copy.integer_bytes";
inline constexpr std::string_view kLeaderOneAxis = "copy.leader_tracked.one_axis";
inline constexpr std::string_view kLeaderCluster2 = "copy.leader_tracked.cluster_size_2";
inline constexpr std::string_view kLeaderLastAxis = "copy.leader_tracked.last_axis_size_2";
inline constexpr std::string_view kLeaderNotCollective =
    "launch_context.leader_tracked.not_collective";
inline constexpr std::string_view kGmemStridesAfterSplit =
    "launch_context.gmem_strides_16b.after_split";
inline constexpr std::string_view kCtaBarrierBudget = "module.cta_barriers.budget";
inline constexpr std::string_view kCpAsyncBarrier = "lower.cp_async.barrier";
inline constexpr std::string_view kCpAsyncCollective = "lower.cp_async.collective";
inline constexpr std::string_view kCpAsyncOob = "lower.cp_async.oob_mode";
inline constexpr std::string_view kCpAsyncPredicate = "lower.cp_async.predicate";
inline constexpr std::string_view kTmaNoBarrier = "lower.tma.no_barrier";
inline constexpr std::string_view kLaneBytes128 = "lower.lane.bytes_multiple_of_128";
inline constexpr std::string_view kBarrierNotSingle = "lower.barrier.not_single";
inline constexpr std::string_view kClusterArriveNotSingle =
    "lower.cluster_barrier.arrive_not_single";
inline constexpr std::string_view kPartitionedAxis = "launch_context.partitioned.axis_out_of_range";
inline constexpr std::string_view kPartitionedNotCollective =
    "launch_context.partitioned.not_collective";
inline constexpr std::string_view kGmemStrides = "launch_context.gmem_strides_16b";
inline constexpr std::string_view kPartitionedDivide = "launch_context.partitioned.size_divides";
inline constexpr std::string_view kSqueezedAssert = "launch_context.squeezed_dims_assert";
inline constexpr std::string_view kSliceTiling = "launch_context.slice_tiling";
inline constexpr std::string_view kClusterRefIndexedType = "dialect.cluster_ref.indexed_type";
inline constexpr std::string_view kClusterRefStore = "dialect.cluster_ref.store";
inline constexpr std::string_view kSmemShape = "launch_context.smem_shape";
inline constexpr std::string_view kLastStride = "launch_context.tma.last_stride";
inline constexpr std::string_view kTmaStorePreHopper = "compile.tma_store.pre_hopper";
inline constexpr std::string_view kRank5 = "launch_context.rank_max_5";
inline constexpr std::string_view kRank0 = "launch_context.rank_0";
inline constexpr std::string_view kMulticastSplit = "launch_context.multicast.no_divisible_dim";
inline constexpr std::string_view kMinorBits = "launch_context.minor_dim_16b";
inline constexpr std::string_view kBox256 = "launch_context.box_max_256";
inline constexpr std::string_view kTmaDtype = "launch_context.tma.dtype";
inline constexpr std::string_view kTmaReduction = "launch_context.tma.reduction_op";
inline constexpr std::string_view kCpAsyncSqueeze = "launch_context.cp_async.squeeze_leading";
inline constexpr std::string_view kCpAsyncElements = "launch_context.cp_async.elements_128";
inline constexpr std::string_view kCpAsyncBytes = "launch_context.cp_async.bytes_per_transfer";
inline constexpr std::string_view kDuplicateDims = "verify.async_load.duplicate_dims";
inline constexpr std::string_view kTryClusterCancelBits = "lower.try_cluster_cancel.result_bits";
inline constexpr std::string_view kTryClusterCancelResult = "verify.try_cluster_cancel.result_i8";
inline constexpr std::string_view kClusterLaunchControlArch =
    "compile.try_cluster_cancel.pre_blackwell";
inline constexpr std::string_view kClusterPreHopper = "compile.cluster.pre_hopper";
inline constexpr std::string_view kCtaGroup2 = "compile.cta_group2.pre_blackwell";
inline constexpr std::string_view kTmemArch = "compile.tmem.pre_blackwell";
inline constexpr std::string_view kWgmmaArch = "compile.wgmma.arch";
inline constexpr std::string_view kOrdersTcArch = "compile.orders_tensor_core.pre_blackwell";
inline constexpr std::string_view kLaunchClusterSize = "launch.cluster_size";
inline constexpr std::string_view kLaunchBlockThreads = "launch.block_threads";
inline constexpr std::string_view kLaunchGridDims = "launch.grid_dims";

// Every id above, for the table test.
inline constexpr std::string_view kAll[] = {kMeshClusterRank,
                                            kMeshGridNames,
                                            kMeshClusterNames,
                                            kMeshThreadsBoth,
                                            kMeshThreadsMax,
                                            kNumArrivals,
                                            kTmemNarrow,
                                            kTmemRank,
                                            kTmemRows,
                                            kLeaderNeedsAxes,
                                            kCopyDtype,
                                            kUnboundAxis,
                                            kSrcShape,
                                            kTransposeRefMemorySpace,
                                            kArriveAndWaitMissing,
                                            kWaitSmemToGmemN,
                                            kNdLoopTilingLength,
                                            kNdLoopTilingDivides,
                                            kVectorPointwise8Bit,
                                            kVectorStridedElements,
                                            kLayoutInference,
                                            kVectorBroadcastLayout,
                                            kDialectBroadcastLayout,
                                            kVectorStridedBroadcast,
                                            kCopyDivisibilityAssert,
                                            kCopyProveDivisibility,
                                            kCopyTilingDivides,
                                            kCopyTransposeTiledDims,
                                            kSplatStoreCount,
                                            kSplatVecSize,
                                            kTilingWithoutSwizzle,
                                            kSwizzleStrided,
                                            kTilingRank,
                                            kWgmmaTiling,
                                            kTiledStoreLayout,
                                            kGmemTransferPlan,
                                            kGmemOptimized,
                                            kIotaLayout,
                                            kIotaUncast,
                                            kLoopCarryLayout,
                                            kEstimateClusterAxis,
                                            kEstimateSemaphore,
                                            kEstimateGmem,
                                            kPallasCall,
                                            kTmemMixed,
                                            kSmemCapacity,
                                            kLeaderOneDim,
                                            kLeaderUngrouped,
                                            kBarrierMax32,
                                            kTmemOddCluster,
                                            kScopedOnlyThread,
                                            kAccCollective,
                                            kAccUnsigned,
                                            kMultithreaded,
                                            kCopyUnknownAxis,
                                            kIntegerBytes,
                                            kLeaderOneAxis,
                                            kLeaderCluster2,
                                            kLeaderLastAxis,
                                            kLeaderNotCollective,
                                            kGmemStridesAfterSplit,
                                            kCtaBarrierBudget,
                                            kCpAsyncBarrier,
                                            kCpAsyncCollective,
                                            kCpAsyncOob,
                                            kCpAsyncPredicate,
                                            kTmaNoBarrier,
                                            kLaneBytes128,
                                            kBarrierNotSingle,
                                            kClusterArriveNotSingle,
                                            kPartitionedAxis,
                                            kPartitionedNotCollective,
                                            kGmemStrides,
                                            kPartitionedDivide,
                                            kSqueezedAssert,
                                            kSliceTiling,
                                            kClusterRefIndexedType,
                                            kClusterRefStore,
                                            kSmemShape,
                                            kLastStride,
                                            kTmaStorePreHopper,
                                            kRank5,
                                            kRank0,
                                            kMulticastSplit,
                                            kMinorBits,
                                            kBox256,
                                            kTmaDtype,
                                            kTmaReduction,
                                            kCpAsyncSqueeze,
                                            kCpAsyncElements,
                                            kCpAsyncBytes,
                                            kDuplicateDims,
                                            kTryClusterCancelBits,
                                            kTryClusterCancelResult,
                                            kClusterLaunchControlArch,
                                            kClusterPreHopper,
                                            kCtaGroup2,
                                            kTmemArch,
                                            kWgmmaArch,
                                            kOrdersTcArch,
                                            kLaunchClusterSize,
                                            kLaunchBlockThreads,
                                            kLaunchGridDims};

// The warp-level context (warp_context.cpp).
inline constexpr std::string_view kWarpUnimplemented = "lower.warp_map.unimplemented_primitive";
inline constexpr std::string_view kWarpArrivePreHopper = "lower.warp_map.arrive_pre_hopper";
inline constexpr std::string_view kWarpClusterArrive = "lower.warp_map.cluster_barrier_arrive";

}  // namespace collfuzz::lowering::rule_id
