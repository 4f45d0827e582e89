"""Typed use of torch_stable_ops generated for `--ops add,pad,amax`: `mypy --strict` must accept it.

tests/test_python_stubs.py type-checks it against the generated package (MYPYPATH=DIR/python).
"""

from __future__ import annotations

import torch
from torch import Tensor

import torch_stable_ops as ops
from torch_stable_ops import VERSIONS, amax, pad

x = torch.ones(2, 3)
out = torch.empty(2, 3)

# add is an overload set: add.Tensor and add.Scalar.
a1: Tensor = ops.add(x, x)
a2: Tensor = ops.add(x, x, alpha=2)
a3: Tensor = ops.add(x, 2.5)
a4: Tensor = ops.add(x, 1, 2)
a5: Tensor = ops.add_out(x, x, alpha=0.5, out=out)

m1: Tensor = amax(x)
m2: Tensor = amax(x, 1)
m3: Tensor = amax(x, [0, 1], keepdim=True)
m4: Tensor = ops.amax_out(x, (0,), out=torch.empty(3))

p1: Tensor = pad(x, [1, 1])
p2: Tensor = pad(x, (1, 1, 2, 2), "reflect")
p3: Tensor = pad(x, [1, 1], value=0.5)
p4: Tensor = pad(x, x.shape, mode="constant", value=None)

needs: str = VERSIONS["pad.default"]
