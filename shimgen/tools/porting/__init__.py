"""Porting an ATen extension to the stable ABI: the analysis behind `shimgen port` (libclang, types resolved;
tree-sitter where libclang cannot parse), the construct rules it reads (data/port_rules.yaml), the members of
torch::stable::Tensor per release (data/stable_tensor_members.json) and the fixer behind `shimgen port --fix`."""
