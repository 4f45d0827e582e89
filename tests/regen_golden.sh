#!/usr/bin/env bash
# Regenerate every golden folder under tests/golden/ and the committed default output in generated/, with the
# tool only (never edit these files by hand). Each folder gets a shimgen.yaml stamp, so
# `shimgen --check --out <folder>` (run by tests/test_golden.py) replays the same invocation.
# Run from anywhere; review `git diff` afterwards: a changed declaration in c_shim_aten.h is an ABI break.
set -euo pipefail
cd "$(dirname "$0")/.."

# Goldens hold exactly the ops named (--only): the focused output of a few op sets. generated/ below is what the
# README's first command writes: those ops plus the manifest's (upstream's surface), as every run without --only.
regen() {
  local name=$1
  shift
  rm -rf "tests/golden/$name"
  python -m shimgen "$@" --only --out "tests/golden/$name" >/dev/null
  echo "tests/golden/$name"
}

# golden: add_pad_amax
regen add_pad_amax --ops add,pad,amax
# golden: optional_list_device_generator -- SymInt[], Scalar, ScalarType?, Layout?, Device?, bool?, Generator?,
# Tensor?[], Tensor[] and Tensor? arguments
regen optional_list_device_generator \
  --ops full.default,new_empty.default,randn.generator,index.Tensor,cat.default,clamp.Tensor
# golden: multi_return -- tuple returns, and a Tensor[] return (no C shim; dispatcher route)
regen multi_return --ops sort.default,max.dim,split.Tensor
# golden: older_release -- another release's yaml (a cut of 2.12.0's): shimgen's own shims are tagged 2.12, the
# release the folder name gives; the Dimname overloads of sort are skipped with a note
regen older_release --yaml tests/fixtures/2.12.0/native_functions.yaml --ops sort

# generated/: exactly what the README's first command writes (the manifest's op set plus add, pad, amax), so
# running that command in a fresh clone changes nothing (tests/test_golden.py checks both).
rm -rf generated
python -m shimgen --ops add,pad,amax >/dev/null
echo generated
