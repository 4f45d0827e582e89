"""Porting an ATen extension to the stable ABI: the model behind `shimgen port` (shimgen.tools.port is the command
over it). The tree-sitter scan of a source's ATen calls (calls.py), what the stable surface answers for each call at
a target release and the routes' caveats (surface.py), the call-level report of that scan (call_report.py); the
libclang analysis (clang_scan.py, types resolved; analyze.py falls back to tree-sitter where libclang cannot parse),
its rows and report (rows.py, report.py), the construct rules it reads (rules.py: data/port_rules.yaml), the members
of torch::stable::Tensor per release (data/stable_tensor_members.json) and the fixer behind `shimgen port --fix`."""
