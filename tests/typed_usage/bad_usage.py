"""Wrong calls of torch_stable_ops (generated for `--ops add,pad,amax`): `mypy --strict` must reject each line
marked `# expect-error: <code>` with that error code, and report nothing else.
"""

from __future__ import annotations

import torch

import torch_stable_ops as ops

x = torch.ones(2, 3)

ops.pad("not a tensor", [1, 1])  # expect-error: arg-type
ops.pad(x, [1.5, 2])  # expect-error: list-item
ops.amax(x, dim="0")  # expect-error: arg-type
ops.add(x, "2")  # expect-error: call-overload
ops.add(x, x, 2)  # expect-error: call-overload
ops.add_out(x, x)  # expect-error: call-arg
ops.amax_out(torch.empty(3), x)  # expect-error: call-arg
n: int = ops.amax(x)  # expect-error: assignment
ops.pad(x, [1, 1], mode=None)  # expect-error: arg-type
