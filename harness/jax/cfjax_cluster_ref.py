"""DSMEM reads: a vector value's SMEM load with a "cluster" member (docs/case-format.md
"vector_store"), `plgpu.cluster_ref(smem.at[index], {AXIS: IDX})[...]`.

    {"load": {"alloc": "smem", "index": [0], "cluster": {"x": {"axis": "x", "mul": -1, "add": 1}}}}

is `plgpu.cluster_ref(smem.at[0], {"x": 1 - lax.axis_index("x")})[...]`: the load reads the SMEM
of the CTA whose coordinate along the cluster axis AXIS is IDX (its other coordinates the reading
CTA's own), through shared::cluster (Mosaic GPU's `get_cluster_ref`, nvvm mapa). IDX is a JSON
integer k (a Python int) or a dynamic index as a GMEM entry's, {"axis": A, "mul": m, "add": a}
(`lax.axis_index(A) * m + a`; m may be negative), optionally with "mod": n (`lax.rem(..., n)`).
The C++ parser checks that IDX is in range for every CTA (a tiled, swizzled allocation is read
in the WGMMA layout: JAX's test_cluster_ref_read, tests/jax/test_transformed_vectors.py); this
module checks the member's form only, for the adapter (cfjax_translate) and
repro (cfjax_repro_body), and finds the transform in a `get` for import (cfjax_import_vectors,
whose VectorsMixin.cluster_peer reads its index).

DSMEM writes: a vector_store's SMEM `dst` takes the same member, {"alloc": "smem", "index": [0],
"cluster": {AXIS: IDX}}, `plgpu.cluster_ref(smem.at[0], {AXIS: IDX})[...] = value` (JAX's `swap`
on the transformed ref: the warpgroup's synchronous store into the peer CTA's SMEM).
"""

from __future__ import annotations

from typing import Any

from cfjax_case import CaseError


def cluster_member(load: dict, path: str) -> tuple[str, Any] | None:
  """A load's or a vector_store dst's "cluster" member as (axis name, index): the index an int
  or a dynamic index dict; None without one. A malformed member is a CaseError naming
  `path`.cluster."""
  c = load.get("cluster")
  if c is None:
    return None
  where = f"{path}.cluster"
  if "alloc" not in load:
    raise CaseError(f"{where}: only a load or a store of an SMEM allocation reaches another "
                    "CTA's memory")
  if not isinstance(c, dict) or len(c) != 1:
    raise CaseError(f"{where}: expected one cluster axis and its index, {{AXIS: IDX}}, got {c!r}")
  (axis, idx), = c.items()
  if not isinstance(axis, str) or not axis:
    raise CaseError(f"{where}: not a cluster axis name: {axis!r}")
  if isinstance(idx, bool):
    raise CaseError(f"{where}.{axis}: not an index: {idx!r}")
  if isinstance(idx, int):
    return axis, idx
  if not isinstance(idx, dict) or ("axis" in idx) == ("loop" in idx):
    raise CaseError(f"{where}.{axis}: an integer or a dynamic index {{\"axis\": A, \"mul\": m, "
                    f"\"add\": a}}, got {idx!r}")
  return axis, idx


def index_text(idx: Any, term: str) -> str | None:
  """A cluster index's source (repro): an int as written; a dynamic index whose only term is
  `term` (its lax.axis_index or loop index) with mul -1 and an add as `ADD - term`
  (`1 - lax.axis_index('x')`), the rest left to the caller (None)."""
  if isinstance(idx, int):
    return str(idx)
  if int(idx.get("mul", 1)) == -1 and not idx.get("plus") and idx.get("mod") is None and \
      idx.get("multiple_of") is None:
    add = int(idx.get("add", 0))
    return f"{add} - {term}" if add else f"-{term}"
  return None


def split_cluster(transforms) -> tuple[tuple, Any]:
  """A ref use's transforms (`get`'s, unflattened) -> (the others, the one ClusterRefTransform;
  None without one, a list of them when cluster_ref was applied more than once).
  `plgpu.cluster_ref(smem.at[0], ...)` puts it after the indexer, `cluster_ref(smem, ...).at[0]`
  before it: both read the same elements (JAX commutes them), so either is taken."""
  rest, found = [], []
  for t in tuple(transforms or ()):
    (found if type(t).__name__ == "ClusterRefTransform" else rest).append(t)
  return tuple(rest), (found if len(found) > 1 else found[0] if found else None)


__all__ = ["cluster_member", "index_text", "split_cluster"]
