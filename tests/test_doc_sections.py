"""The docs' generated sections are the tool's output, like the goldens: the overlay-needs list in docs/routes.md
(which wrappers of the whole yaml need shimgen's overlay at target 2.13, each with its reason) is what
`python -m shimgen.dev overlay-needs --target 2.13 --doc docs/routes.md` writes from the code and data of this
checkout."""

from __future__ import annotations

import os
import shutil

import pytest

from shimgen.proofs import overlay_needs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow  # the whole yaml in every build world
def test_overlay_needs_section_is_in_sync(tmp_path, capsys) -> None:
    copy = tmp_path / "routes.md"
    shutil.copyfile(os.path.join(ROOT, overlay_needs.DOC), copy)
    assert overlay_needs.main(["--target", "2.13", "--doc", str(copy)]) == 0
    count = capsys.readouterr().err.strip().splitlines()[-1]
    with open(os.path.join(ROOT, overlay_needs.DOC), encoding="utf-8") as f:
        assert copy.read_text(encoding="utf-8") == f.read(), (
            f"{overlay_needs.DOC}'s overlay-needs section is stale: run python -m shimgen.dev overlay-needs --target 2.13 "
            f"--doc {overlay_needs.DOC} and commit the result")
    assert count.endswith("wrappers need the overlay at target 2.13"), count


def test_hidden_at_2_10_section_is_in_sync(tmp_path, capsys) -> None:
    copy = tmp_path / "routes.md"
    shutil.copyfile(os.path.join(ROOT, overlay_needs.DOC), copy)
    assert overlay_needs.main(["--hidden", "--target", "2.10", "--doc", str(copy)]) == 0
    count = capsys.readouterr().err.strip().splitlines()[-1]
    with open(os.path.join(ROOT, overlay_needs.DOC), encoding="utf-8") as f:
        assert copy.read_text(encoding="utf-8") == f.read(), (
            f"{overlay_needs.DOC}'s hidden-at-target section is stale: run python -m shimgen.dev overlay-needs "
            f"--hidden --target 2.10 --doc {overlay_needs.DOC} and commit the result")
    assert "overloads hidden at target 2.10 in the default build" in count, count
