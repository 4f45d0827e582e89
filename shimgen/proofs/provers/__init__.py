"""Provers: commands that measure facts into shimgen/data by running aten (they may import shimgen.proofs.verify);
the generation stack only reads the data they write."""
