#include "harness/lowering/dialect_stage.h"

#include <algorithm>

#include "harness/core/memref_text.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/lowering_rules.h"
#include "harness/lowering/rule_ids.h"
#include "harness/lowering/tiling_inference.h"
#include "harness/lowering/warp_context.h"

namespace collfuzz::lowering {

void finish_module(const Case& c, KernelIr& ir, const ClusterGeometry& geometry) {
  const bool warpgroup = c.target.semantics == Semantics::kWarpgroup;
  if (warpgroup) {
    // module.operation.verify(), op by op: AsyncLoadOp's verifier, and TryClusterCancelOp's
    // (its result a 1-D memref of i8; int8 and uint8 are both signless i8).
    for (const IrOp& op : ir.ops) {
      if (op.kind == IrKind::kClusterCancel) {
        const IrClusterCancel& cc = ir.cluster_cancels[static_cast<std::size_t>(op.index)];
        const Alloc& result = *cc.result;
        if (cancel_result_shape(*cc.op, result).size() != 1 ||
            (result.dtype != DType::kInt8 && result.dtype != DType::kUInt8)) {
          raise(Stage::kVerify, "VerificationError",
                "Pallas encountered an internal verification error. Please file a bug at "
                "https://github.com/jax-ml/jax/issues/new/choose. Error details: "
                "'mosaic_gpu.try_cluster_cancel' op operand #0 must be 1D memref of 8-bit "
                "signless integer values, but got '" +
                    memref_text(result.dtype, result.shape,
                                smem_index_entries(cc.op->result_index, false), true) +
                    "'",
                rule_id::kTryClusterCancelResult, op.op->path);
        }
        continue;
      }
      if (op.kind != IrKind::kCopy) continue;
      const IrCopy& ic = ir.copies[static_cast<std::size_t>(op.index)];
      if (ic.cp_async) continue;
      std::vector<int> dims = ic.collective;
      std::sort(dims.begin(), dims.end());
      if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) {
        raise(Stage::kVerify, "VerificationError",
              "Pallas encountered an internal verification error. Please file a bug at "
              "https://github.com/jax-ml/jax/issues/new/choose. Error details: "
              "'mosaic_gpu.async_load' op The "
              "`collective` attribute must not contain duplicate dimensions",
              rule_id::kDuplicateDims, ic.op->path);
      }
    }
    // The layout inference pass: a vector value that loads a ref needs a strided layout, which
    // a count that is no multiple of 128 has none of, nor a broadcast of it along other dims than
    // new leading ones; a tiled SMEM ref's tiling divides what it proves of each copy's GMEM
    // slice.
    const IrVectorStore* unlaid = nullptr;
    for (const IrVectorStore& iv : ir.vector_stores) {
      if (((iv.own_layout && iv.elements % 128 != 0) || iv.broadcast_unlaid || iv.iota_unlaid ||
           iv.wgmma_unlaid) &&
          !unlaid)
        unlaid = &iv;
    }
    infer_copy_tilings(c, ir, unlaid);
    // dialect_lowering.lower_mgpu_dialect: the async_load / async_store rules in program order.
    for (const IrOp& op : ir.ops) {
      check_warp_arrive_dialect(op, ir, c.target.arch);
      if (op.kind == IrKind::kCopy) {
        IrCopy& ic = ir.copies[static_cast<std::size_t>(op.index)];
        ic.shape = prepare_async_copy(load_request(c, ic, Stage::kDialect), geometry);
      } else if (op.kind == IrKind::kStore) {
        IrStore& is = ir.stores[static_cast<std::size_t>(op.index)];
        is.shape = prepare_async_copy(store_request(c, is, Stage::kDialect), geometry);
      } else if (op.kind == IrKind::kVectorStore) {
        const IrVectorStore& iv = ir.vector_stores[static_cast<std::size_t>(op.index)];
        // The store's own lowering refuses a peer CTA's SMEM (neither GMEM nor the CTA's SMEM).
        const bool to_peer = iv.store && iv.store->to_smem && !iv.store->cluster_axis.empty();
        const auto peer_store = [&] {
          if (to_peer)
            raise(Stage::kDialect, "ValueError",
                  "Unsupported memory space: #mosaic_gpu.smem_cluster", rule_id::kClusterRefStore,
                  op.op->path);
        };
        if (iv.wgmma) {  // laid out as WGMMA: its ops' errors, then the store's own
          if (iv.wgmma_value_error) {
            raise(Stage::kDialect, iv.wgmma_value_error->exception.c_str(),
                  iv.wgmma_value_error->message, iv.wgmma_value_error->rule, op.op->path);
          }
          peer_store();
          if (iv.wgmma_store_error) {
            raise(Stage::kDialect, iv.wgmma_store_error->exception.c_str(),
                  iv.wgmma_store_error->message, iv.wgmma_store_error->rule, op.op->path);
          }
          continue;
        }
        if (iv.elements % 128 != 0) {  // a value of constants: a splat (inference passed it)
          peer_store();
          raise(Stage::kDialect, "NotImplementedError", kSplatStoreCountMessage,
                rule_id::kSplatStoreCount, op.op->path);
        }
        // The value's loads are lowered first, in the order Python evaluated them.
        if (!jax_facts(c.target.jax).indexed_cluster_ref_loads &&
            !iv.indexed_cluster_memref.empty()) {
          raise(Stage::kDialect, "ValueError",
                "Expected type " + iv.indexed_cluster_memref + " for value OpResult(",
                rule_id::kClusterRefIndexedType, op.op->path);
        }
        if (iv.eight_bit) {
          raise(Stage::kDialect, "NotImplementedError", kPointwise8BitMessage,
                rule_id::kVectorPointwise8Bit, op.op->path);
        }
        peer_store();
        if (iv.splat_vec_size_error) {
          raise(Stage::kDialect, "ValueError", *iv.splat_vec_size_error, rule_id::kSplatVecSize,
                op.op->path);
        }
      }
    }
  }
  // launch_ctx.scratch.finalize_size(): the descriptors' host_init callbacks, in creation order,
  // after the dialect lowering (stage `finalize`).
  for (const IrOp& op : ir.ops) {
    const AsyncCopyShape* shape = nullptr;
    if (op.kind == IrKind::kCopy) shape = &*ir.copies[static_cast<std::size_t>(op.index)].shape;
    if (op.kind == IrKind::kStore) shape = &*ir.stores[static_cast<std::size_t>(op.index)].shape;
    if (shape && shape->descriptor_error) {
      raise(Stage::kFinalize, "ValueError", *shape->descriptor_error, rule_id::kLastStride,
            op.op->path);
    }
  }
}

}  // namespace collfuzz::lowering
