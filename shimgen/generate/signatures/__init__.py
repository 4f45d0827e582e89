"""The signature stage: stage.py (a plan's wrappers and C shim set), c.py (C shims), cpp.py (C++ wrappers)."""
