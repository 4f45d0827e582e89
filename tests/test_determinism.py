"""Output is deterministic across processes: the same invocation in interpreters with different hash seeds (set and
dict iteration order of strings differs between them) writes the same bytes. tests/test_python_stubs.py's
test_deterministic runs twice in one process, where the seed is the same, so it cannot see this."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every surface and route: C shims (libtorch's and shimgen's), dispatcher, Tensor siblings, a composition,
# overload sets with synthesized defaults and std::nullopt forwarding, hand-written extras, tuple and list returns.
OPS = "add,mul,sort,full,clamp,where,sum,std,randn,index,cat,split,max,pad,amax,fill_,remainder,bitwise_and"


def _files(folder: str) -> dict[str, bytes]:
    found = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            path = os.path.join(dirpath, n)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = f.read()
    return found


def test_same_bytes_under_different_hash_seeds(tmp_path) -> None:
    outputs = []
    for seed in ("0", "1", "4242"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": ROOT}
        proc = subprocess.run([sys.executable, "-m", "shimgen", "--ops", OPS, "--out", str(out)], env=env,
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs.append((_files(str(out)), proc.stderr))
    (first, notes), *others = outputs
    assert len(first) > 20
    for files, other_notes in others:
        assert sorted(files) == sorted(first)
        assert [p for p in first if files[p] != first[p]] == []
        assert other_notes == notes  # the printed notes too, in the same order
