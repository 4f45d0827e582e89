"""The cases the ported extensions are compared on: run by each torch runtime's Python, once with the ATen
original loaded and once with the stable port, each writing its results (torch.save) for the test to compare.

    python cases.py LIBRARY.so [LIBRARY.so ...] OUT.pt
"""

import os
import sys

import torch


def boxes(g, n, dtype):
    xy = torch.rand(n, 2, generator=g, dtype=torch.float64) * 50
    wh = torch.rand(n, 2, generator=g, dtype=torch.float64) * 20 + 1
    return torch.cat([xy, xy + wh], 1).to(dtype)


def cases():
    g = torch.Generator().manual_seed(0)
    out = []
    for dtype in (torch.float32, torch.float64):
        a, b = boxes(g, 7, dtype), boxes(g, 5, dtype)
        s = torch.rand(7, generator=g, dtype=torch.float64).to(dtype)
        out += [
            ("box_ops.box_area", (a,)),
            ("box_ops.box_iou", (a, b)),
            ("box_ops.nms", (a, s, 0.3)),
            ("box_ops.nms", (a[:0], s[:0], 0.5)),
            ("box_ops.encode_boxes", (a[:5], b, 10.0, 5.0)),
            ("box_ops_extra.clip_boxes", (a, 40, 30)),
        ]
        v = torch.randn(9, 3, generator=g, dtype=torch.float64).to(dtype)
        off = torch.tensor([0, 2, 2, 6, 9])
        x = torch.randn(3, 6, generator=g, dtype=torch.float64).to(dtype)
        mask = torch.rand(3, 6, generator=g) > 0.4
        out += [
            ("seq_ops.segment_sum", (v, off)),
            ("seq_ops.segment_mean", (v, off)),
            ("seq_ops.masked_running_mean", (x, mask)),
            ("seq_ops.topk_gather", (x, torch.randn(3, 6, 4, generator=g, dtype=torch.float64).to(dtype), 2)),
            ("seq_ops.scale_shift", (x, torch.rand(6, generator=g, dtype=torch.float64).to(dtype),
                                     torch.randn(6, generator=g, dtype=torch.float64).to(dtype), -0.5, 0.75, False)),
            ("seq_ops.scale_shift", (x, torch.rand(6, generator=g, dtype=torch.float64).to(dtype),
                                     torch.randn(6, generator=g, dtype=torch.float64).to(dtype), -1.0, 0.25, True)),
        ]
        w = torch.randn(4, 8, generator=g, dtype=torch.float64).to(dtype)
        idx = torch.tensor([[0, 3, 3, 7], [1, 1, 2, 2], [5, 0, 6, 4], [7, 7, 7, 0]])
        out += [
            ("row_ops.row_softmax", (w,)),
            ("row_ops.row_softmax", (w * 30,)),
            ("row_ops.gather_scale", (w, idx, 1.5)),
            ("row_ops.bias_gelu", (w, torch.randn(8, generator=g, dtype=torch.float64).to(dtype))),
        ]
    out += [
        ("box_ops.box_iou", (boxes(g, 3, torch.float32), boxes(g, 3, torch.float64))),  # an error either way
        ("seq_ops.segment_sum", (torch.randn(4, 2), torch.tensor([0, 1, 3]))),  # offsets end short: an error
        ("row_ops.gather_scale", (torch.randn(2, 3), torch.tensor([[0, 3]]), 1.0)),  # an error
    ]
    return out


def run(libs, path):
    for lib in libs:
        torch.ops.load_library(lib)
    results = []
    for name, args in cases():
        ns, op = name.split(".")
        try:
            got = getattr(getattr(torch.ops, ns), op)(*args)
            results.append((name, "ok", got))
        except Exception as e:  # the ported op must fail where the original fails
            results.append((name, "error", type(e).__name__))
    torch.save(results, path)


if __name__ == "__main__":
    run(sys.argv[1:-1], sys.argv[-1])
    sys.stdout.flush()
    os._exit(0)  # no finalization with torch loaded (a second of CPU): tests/children.py
