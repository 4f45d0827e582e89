"""The emitters (c.py, cpp.py, py.py) and the layout of what they write (cpp_layout.py, py_layout.py, fmt.py)."""
