"""Provers: commands that measure facts into shimgen/data by running aten (they may import shimgen.verify);
the generation stack only reads the data they write."""
