#!/usr/bin/env python3
"""The table of tests/core/wgmma_transfer_test.cpp: JAX 0.12.0.1's own plan_gmem_transfer on the
WGMMA layout for GMEM refs of a few shapes, row strides and element widths, nested as
FragmentedArray.store_untiled nests them.

    .venv-jax-0.12.0.1/bin/python tools/wgmma_plan_table.py > table.json

prints [shape, strides, bits, message or null] rows (null: a plan is found), the rows the test
holds harness/core/wgmma_transfer.cpp's port against.
"""
import itertools, json, random
from jax.experimental.mosaic.gpu import fragmented_array as fa
L=fa.WGMMA_LAYOUT
random.seed(1)
rows=[]
def nested(shape, strides):
    ns=[];st=[]
    for d,s in zip(shape,strides):
        if d!=1: ns.append((1,d)); st.append((0,s))
        else: ns.append((1,)); st.append((0,))
    return tuple(ns),tuple(st)
cands=[]
for bits in [8,16,32]:
  for shape in [(64,8),(64,16),(64,32),(64,64),(128,32),(64,128),(2,64,32),(64,256),(192,16)]:
    rs=[1]
    strides_opts=[]
    c=shape[-1]
    for rowstride in [c, c+8, 2*c, c+32, 3*c]:
        st=[0]*len(shape); st[-1]=1; st[-2]=rowstride
        if len(shape)==3: st[0]=rowstride*shape[1]
        strides_opts.append(tuple(st))
    for st in strides_opts: cands.append((shape,st,bits))
for shape,st,bits in cands:
    ns,nst=nested(shape,st)
    try:
        fa.plan_gmem_transfer(ns,nst,L,bits); msg=None
    except fa.TransferPlanDerivationError as e: msg=str(e)
    except ValueError as e: msg='VE:'+str(e)
    rows.append([list(shape),list(st),bits,msg])
print(json.dumps(rows))
