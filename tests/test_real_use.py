"""The real-use ranking (shimgen/proofs/real_use.py, data/real_use.json): the call-site heuristic on small source
trees written here (no mirror, no network), the committed data's shape, and the hidden-at-target section's order by
it (docs/routes.md, overlay-needs --hidden)."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from shimgen import dev
from shimgen.base.inputs import package_text
from shimgen.proofs import overlay_needs, real_use
from shimgen.proofs.real_use import OpNames

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# a small stand-in for the yaml's names: `relu`, `sum`, `view`, `split`, `values`, `transpose` are methods; `transpose`
# needs an argument (its dim0, dim1); `split` and `values` are also Python builtins' methods; `conv2d`, `gelu` are
# functions only
NAMES = OpNames(names=frozenset({"relu", "sum", "view", "split", "values", "transpose", "conv2d", "gelu", "empty"}),
                methods=frozenset({"relu", "sum", "view", "split", "values", "transpose"}),
                needs_arg=frozenset({"transpose", "split"}), release="2.13")

CPP = r'''
#include <torch/extension.h>
namespace F = torch::nn::functional;
// at::relu(x) in a comment does not count
/* nor at::gelu(x) in a block
   comment, over lines */
at::Tensor f(const at::Tensor& x, std::vector<int64_t> v) {
  auto msg = "at::conv2d(x) in a string";
  auto raw = R"doc(torch::gelu(y) in a raw string)doc";
  char q = '"'; int big = 1'000;
  auto a = at::relu(x);               // relu 1
  auto b = torch::gelu(a);            // gelu 1
  auto c = ::at::conv2d(a, a);        // conv2d 1
  auto d = at::native::gelu(a);       // not aten's public API
  auto e = at::cpu::relu(a);          // nor a backend's
  auto g = F::gelu(a);                // gelu 2
  auto h = torch::nn::functional::relu(a);  // relu 2
  auto i = a.sum().view({-1});        // sum 1, view 1
  auto j = a->transpose(0, 1);        // transpose 1
  auto k = v.transpose();             // no argument: not aten's transpose
  auto l = a.template sum<float>();   // sum 2
  auto m = at::Tensor(a);             // not an op
  return x.unknown_method();
}
'''

PY = '''
import torch
import torch.nn.functional as F
import numpy as np
from torch import nn
from torch.nn import functional as G
from torch import gelu as my_gelu
from . import helpers

# torch.relu(x) in a comment
DOC = "torch.conv2d(x) in a string"

class M(nn.Module):
    def forward(self, x):
        y = torch.relu(x)              # relu 1
        y = F.gelu(y)                  # gelu 1
        y = G.relu(y)                  # relu 2
        y = nn.functional.gelu(y)      # gelu 2
        y = torch.nn.functional.conv2d(y, y)  # conv2d 1
        y = my_gelu(y)                 # gelu 3
        y = self.relu(y)               # the module's own submodule: not counted
        y = y.sum(0).view(-1)          # sum 1, view 1
        z = np.sum(y)                  # numpy's: not counted
        h = helpers.view(y)            # the package's module: not counted
        parts = "a b".split()          # str's: not counted
        w = {}.values()                # dict's: not counted
        t = y.transpose(0, 1).transpose()  # transpose 1 (the empty call cannot be aten's)
        e = torch.Tensor.relu(y)       # relu 3
        return F.interpolate(y)        # no aten op of that name
'''


def test_strip_cpp_blanks_comments_and_literals_and_keeps_lines() -> None:
    src = 'a // x(\nb /* y(\n */ c "z(\\"(" \'"\' d R"q(w()q" e 1\'000\n'
    out = real_use.strip_cpp(src)
    assert out.count("\n") == src.count("\n") and len(out) == len(src)
    assert "x(" not in out and "y(" not in out and "z(" not in out and "w(" not in out
    assert re.findall(r"[a-e]", out) == ["a", "b", "c", "d", "e"]
    assert "1'000" in out  # a digit separator is code, not a character literal


def test_cpp_call_sites() -> None:
    found = real_use.count_cpp(CPP, NAMES)
    assert dict(found) == {"relu": 2, "gelu": 2, "conv2d": 1, "sum": 2, "view": 1, "transpose": 1}


def test_python_call_sites() -> None:
    found = real_use.count_python(PY, NAMES)
    assert dict(found) == {"relu": 3, "gelu": 3, "conv2d": 1, "sum": 1, "view": 1, "transpose": 1}
    assert real_use.count_python("def f(:\n", NAMES) is None  # unparsable: reported, not guessed


def test_builtin_like_methods_are_python_builtins_methods() -> None:
    assert NAMES.builtin_like == {"split", "values"}


def test_installed_yaml_names() -> None:
    names = real_use.op_names()
    assert {"gelu", "conv2d", "elu", "add_", "view", "to"} <= names.names
    assert {"view", "to", "add_"} <= names.methods and "conv2d" not in names.methods
    assert "size" not in names.methods  # size.int is a function only: `.size(` counts nowhere
    assert "transpose" in names.needs_arg and "sum" not in names.needs_arg
    assert {"split", "values", "index"} <= names.builtin_like


def _tree(root) -> None:
    (root / "csrc").mkdir(parents=True)
    (root / "csrc" / "ops.cu").write_text(CPP)
    (root / "pkg").mkdir()
    (root / "pkg" / "model.py").write_text(PY)
    for skipped in ("tests/test_ops.py", "third_party/lib/x.cpp", "pkg/test_model.py", "benchmarks/b.py"):
        (root / skipped).parent.mkdir(parents=True, exist_ok=True)
        (root / skipped).write_text("import torch\ntorch.relu(x)\nat::relu(x);\n")
    (root / "LICENSE").write_text("Copyright (c) the authors\n\nPermission is hereby granted, free of charge, to any"
                                  " person obtaining a copy\n")


def test_derive_from_a_plain_tree_and_a_git_mirror(tmp_path) -> None:
    mirrors = tmp_path / "mirrors"
    _tree(mirrors / "acme+plain")
    git = mirrors / "acme+git"
    _tree(git)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2024-01-02T00:00:00Z",
           "GIT_COMMITTER_DATE": "2024-01-02T00:00:00Z"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(git), *cmd], check=True, env=env)
    (git / "csrc" / "ops.cu").write_text("at::relu(x);\n")  # the work tree's change: the commit is what counts
    (mirrors / "not-a-repo").mkdir()  # no owner+name: ignored
    data = real_use.derive(str(mirrors), NAMES)
    repos = {r["repo"]: r for r in data["repositories"]}
    assert list(repos) == ["acme/git", "acme/plain"]
    assert repos["acme/plain"]["commit"] is None and repos["acme/plain"]["license"] == "MIT"
    assert re.fullmatch(r"[0-9a-f]{40}", repos["acme/git"]["commit"]) and repos["acme/git"]["date"] == "2024-01-02"
    assert repos["acme/git"]["cpp_files"] == 1 and repos["acme/git"]["python_files"] == 1
    assert data["date"] == "2024-01-02" and data["torch"] == "2.13"
    assert data["ops"]["relu"] == {"cpp": 4, "python": 6, "repos": 2}
    assert data["ops"]["conv2d"] == {"cpp": 2, "python": 2, "repos": 2}
    text = real_use.dumps(data)
    assert json.loads(text) == data and real_use.dumps(json.loads(text)) == text
    assert real_use.ranking(data)[:2] == [("gelu", 10), ("relu", 10)]  # ties by name


def test_spdx() -> None:
    assert real_use.spdx("Apache License\n Version 2.0, January 2004") == "Apache-2.0"
    assert real_use.spdx("Redistribution and use in source and binary forms ... Neither the name of") == "BSD-3-Clause"
    assert real_use.spdx("all rights reserved") == "NOASSERTION"


def test_the_command_is_registered() -> None:
    assert dev.COMMANDS["real-use"][0] == "shimgen.proofs.real_use"


def test_real_use_json_is_well_formed_and_sorted() -> None:
    text = package_text(real_use.DATA)
    data = json.loads(text)
    assert text == real_use.dumps(data), "data/real_use.json is written by `python -m shimgen.dev real-use --write`"
    assert set(data) == {"about", "torch", "date", "repositories", "ops"}
    repos = data["repositories"]
    assert len(repos) >= 6 and [r["repo"] for r in repos] == sorted(r["repo"] for r in repos)
    for r in repos:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", r["repo"]), r
        assert re.fullmatch(r"[0-9a-f]{40}", r["commit"]) and re.fullmatch(r"\d{4}-\d\d-\d\d", r["date"]), r
        assert r["license"] in {"Apache-2.0", "MIT", "BSD-3-Clause", "BSD-2-Clause"}, r
        assert r["cpp_files"] + r["python_files"] > 0, r
    assert data["date"] == max(r["date"] for r in repos)
    ops = data["ops"]
    assert list(ops) == sorted(ops)
    from shimgen.generate.parse import NativeYaml

    aten = set(NativeYaml().by_name)
    for name, row in ops.items():
        assert name in aten, name
        assert set(row) == {"cpp", "python", "repos"} and all(isinstance(v, int) for v in row.values()), row
        assert row["cpp"] + row["python"] > 0 and 1 <= row["repos"] <= len(repos), (name, row)


def test_hidden_section_orders_by_real_use() -> None:
    rows = [("alpha.default", "why a"), ("beta.out", "why b"), ("beta.default", "why b"), ("gamma.default", "why c")]
    uses = {"beta": 7, "gamma": 7}
    assert overlay_needs.by_use(rows, uses) == [("beta.default", "why b", 7), ("beta.out", "why b", 7),
                                                ("gamma.default", "why c", 7), ("alpha.default", "why a", 0)]
    from shimgen.facts.versions import Version

    text = overlay_needs.hidden_section(rows, [], Version.parse("2.10"), "a list", uses)
    body = [line for line in text.splitlines() if line.startswith("| `")]
    assert body[0] == "| `beta.default` | 7 | why b |" and body[-1] == "| `alpha.default` | 0 | why a |"
    assert "data/real_use.json" in text and "python -m shimgen.dev real-use" in text
    ranking = [("gamma", 9), ("delta", 8), ("beta", 7), ("alpha", 1)]
    assert overlay_needs.most_used_hidden(rows, ranking, {"alpha", "beta", "gamma", "delta"}, top=3) == ["gamma", "beta"]
    assert overlay_needs.most_used_hidden(rows, ranking, {"alpha", "beta", "delta"}, top=2) == ["beta"]


def test_routes_doc_hidden_list_is_in_real_use_order() -> None:
    """The committed section (kept in sync with the tool by tests/test_doc_sections.py) shows each overload's count
    from data/real_use.json, most used first."""
    with open(os.path.join(ROOT, overlay_needs.DOC), encoding="utf-8") as f:
        doc = f.read()
    section = doc.split(overlay_needs.HIDDEN_BEGIN, 1)[1].split(overlay_needs.HIDDEN_END, 1)[0]
    # two tables: the hidden overloads, then those that compile and raise on 2.10-2.13; each in its own order
    hidden, _, guarded = section.partition("that compile and raise on 2.10-2.13")
    uses = real_use.uses()
    for table in (hidden, guarded):
        rows = re.findall(r"^\| `([^`]+)` \| (\d+) \|", table, re.M)
        assert len(rows) > 50
        assert [int(n) for _, n in rows] == [uses.get(op.split(".")[0], 0) for op, _ in rows]
        keys = [(-int(n), op) for op, n in rows]
        assert keys == sorted(keys)
    # the hidden table starts with used ops (the generator overloads); of the guarded ones none is used in the
    # seven repositories since quantile, nanquantile and searchsorted's out= compute on 2.10-2.13
    assert int(re.findall(r"^\| `[^`]+` \| (\d+) \|", hidden, re.M)[0]) > 0
