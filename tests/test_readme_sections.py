"""The README's generated sections are the tool's output, like the goldens: the overlay-needs list (which wrappers
of the whole yaml need shimgen's overlay at target 2.13, each with its reason) is what
`python -m shimgen.overlay_needs --target 2.13 --readme README.md` writes from the code and data of this checkout."""

from __future__ import annotations

import os
import shutil

from shimgen import overlay_needs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_overlay_needs_section_is_in_sync(tmp_path, capsys) -> None:
    copy = tmp_path / "README.md"
    shutil.copyfile(os.path.join(ROOT, "README.md"), copy)
    assert overlay_needs.main(["--target", "2.13", "--readme", str(copy)]) == 0
    count = capsys.readouterr().err.strip().splitlines()[-1]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        assert copy.read_text(encoding="utf-8") == f.read(), (
            "README's overlay-needs section is stale: run python -m shimgen.overlay_needs --target 2.13 --readme "
            "README.md and commit the result")
    assert count.endswith("wrappers need the overlay at target 2.13"), count
