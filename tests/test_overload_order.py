"""C++ overload resolution does not depend on which overload sorts first, and --verify's out= samples handle list
outs. Cheap: plans and sample generation only, nothing is compiled."""

from __future__ import annotations

from shimgen.generate import plan as plan_mod
from shimgen.generate.signatures.cpp import wrappers


def _by_op(ops: str):
    ws, _ = wrappers(plan_mod.make(ops.split(",")))
    return {w.op.name: w for w in ws}


def test_plain_out_keeps_its_name_when_the_generator_out_sorts_first():
    ws = _by_op("randn.out,randn.generator_out")
    assert ws["randn.out"].name == "randn_out"
    assert str(ws["randn.out"].since) == "2.10"
    gen = ws["randn.generator_out"]
    assert gen.name == "randn_out"  # a C++ overload: (out, size, generator), generator required
    assert str(gen.since) == "2.13"  # its narrowed 2.10 form would be randn.out itself
    assert not any(p.synthesized for p in gen.params)


def test_same_result_in_either_order():
    a = _by_op("random_.from,random_.to")
    b = _by_op("random_.to,random_.from")
    for op in ("random_.from", "random_.to"):
        assert (a[op].name, a[op].since, a[op].params) == (b[op].name, b[op].since, b[op].params)
    assert a["random_.to"].name == "random_" and str(a["random_.to"].since) == "2.9"


def test_list_out_samples_get_one_tensor_per_element():
    import torch

    from shimgen.proofs.verify import samples

    op = {
        "args": [
            {"name": "self", "type": "Tensor", "is_out": False},
            {"name": "out", "type": "Tensor[]", "is_out": True},
        ]
    }
    x = torch.zeros(4, 3)
    variants = dict(samples.out_tensors(op, {"self": x}, lambda self: list(x.split(2)), torch.float32, True))
    assert [tuple(t.shape) for t in variants["out=sized"]["out"]] == [(2, 3), (2, 3)]
    assert [t.numel() for t in variants["out=empty"]["out"]] == [0, 0]
