"""The generation core, in pipeline order: parse -> plan -> signatures and routes -> emit -> templates.

It imports shimgen.base and shimgen.facts, never shimgen.proofs or shimgen.tools (tests/test_layering.py)."""
