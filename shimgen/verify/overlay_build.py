"""`python -m shimgen.verify.overlay_build --ops LIST --out DIR`: build libshimgen_overlay.so for the installed torch
(shimgen.verify.overlay.main)."""

from shimgen.verify.overlay import main

if __name__ == "__main__":
    raise SystemExit(main())
