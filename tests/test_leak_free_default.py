"""Nothing leaks per call in the default build: a `str` through libtorch 2.10-2.13's boxed dispatcher (which leaks
48 bytes per call converting it) is taken only where the extension defines SHIMGEN_LEAKY_STR; without it such a
call is a compile error naming the leak and the remedies (benchmarks/bench_leaks.py measures the leak), unless a
leak-free composition computes it: `div(a, b, "floor")` (kernel `str_value`, tests/test_rounding_mode_composition.py)
compiles in the default build."""

from __future__ import annotations

import pytest

from shimgen.generate.pipeline import generate, write
from tests.cxx import syntax_check

CALLS = {
    "gelu": "ts::gelu(x);",
    "gelu_tanh": 'ts::gelu(x, "tanh");',
}
LEAK_FREE = {  # a composition compares the string in C++: no str crosses the ABI
    "div_floor": 'ts::div(x, x, std::string_view("floor"));',
}
TARGETS = {"2.10": "0x020a000000000000", "2.13": "0x020d000000000000"}


@pytest.fixture(scope="module")
def gen(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("leak_free") / "gen")
    files, _ = generate(["gelu.default", "div.Tensor_mode"], None, None, out, only=True)
    write(out, files)
    return out


def _source(call: str) -> str:
    return ("#include <torch/csrc/stable/ops.h>\nnamespace ts = torch::stable;\n"
            f"void f(const torch::stable::Tensor& x) {{ {call} }}\n")


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_default_build_refuses_the_leaking_route(gen: str, call: str, target: str) -> None:
    res = syntax_check(_source(CALLS[call]), gen, TARGETS[target])
    assert res.returncode != 0, f"{call} compiled at {target} in the default build"
    assert "leak of 48 bytes per call" in res.stderr or "leaks 48 bytes per call" in res.stderr, res.stderr[-2000:]
    assert "SHIMGEN_LEAKY_STR" in res.stderr, res.stderr[-2000:]


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("call", sorted(LEAK_FREE))
def test_default_build_takes_the_leak_free_composition(gen: str, call: str, target: str) -> None:
    res = syntax_check(_source(LEAK_FREE[call]), gen, TARGETS[target], strict=True)
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.mark.parametrize("call", sorted(CALLS | LEAK_FREE))
def test_leaky_route_only_when_asked(gen: str, call: str) -> None:
    res = syntax_check(_source({**CALLS, **LEAK_FREE}[call]), gen, TARGETS["2.10"], ("SHIMGEN_LEAKY_STR",),
                       strict=True)
    assert res.returncode == 0, res.stderr[-2000:]
