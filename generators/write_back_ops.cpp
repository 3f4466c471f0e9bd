// The ops of a scope's write-back (program_builder.cpp): its stores, their commits and waits.
#include "generators/write_back_ops.h"

#include <utility>
#include <vector>

namespace collfuzz::generators {
namespace {

Op make_store_op(auto v) {
  Op op;
  op.v = std::move(v);
  return op;
}

// The same store, reducing: copy_smem_to_gmem(src, dst, reduction_op=op).
CopySmemToGmem reduced(CopySmemToGmem store, ReductionOp op) {
  store.reduction_op = op;
  return store;
}

}  // namespace

Body write_back_ops(const CopySmemToGmem& store, std::optional<ReductionOp> reduce, StoreSync sync,
                    bool read_only) {
  std::vector<CopySmemToGmem> stores{store};
  if (reduce) stores.push_back(reduced(store, *reduce));
  Body body;
  for (CopySmemToGmem& st : stores) {
    st.wait = sync == StoreSync::kIdiom;
    st.commit_group = sync != StoreSync::kCommitLater && sync != StoreSync::kNeverCommitted;
    body.push_back(make_store_op(st));
  }
  const auto wait = [&](std::int64_t n) {
    body.push_back(make_store_op(WaitSmemToGmem{n, read_only}));
  };
  switch (sync) {
    case StoreSync::kIdiom:
    case StoreSync::kNoWait:
      break;
    case StoreSync::kWaitZero:
    case StoreSync::kNeverCommitted:
      wait(0);
      break;
    case StoreSync::kWaitOne:
      wait(1);
      break;
    case StoreSync::kCommitLater:
      body.push_back(make_store_op(CommitSmemToGmemGroup{}));
      wait(0);
      break;
    case StoreSync::kNegativeWait:
      wait(-1);
      break;
  }
  return body;
}

}  // namespace collfuzz::generators
