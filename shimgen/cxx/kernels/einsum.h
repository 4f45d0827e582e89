// ---- kernel `einsum`: aten::einsum as aten computes it (Linear.cpp,
// CompositeImplicitAutograd: einsum, sumproduct_pair) ----
//
// The wrapper calls the same aten ops in the same order (diagonal and movedim
// for a repeated label, unsqueeze and permute to align the operands, sum of
// the dimensions only one operand has, then per pair permute, reshape, bmm,
// view and permute, or mul where nothing is summed), so no `str` crosses the
// ABI: the equation is parsed here, with aten's checks in its words. The calls
// name the wrappers unqualified on T (torch::stable::Tensor): argument-
// dependent lookup finds them where the wrapper instantiates the template,
// after the per-op header has included them (the row's `calls`).

/// aten's einsum error, its text with "(aten raises)", as a shimgen: error.
template <typename = void>
[[noreturn]] inline void einsum_fail(const std::string& text) {
  fail("einsum.default", (text + " (aten raises)").c_str());
}

/// einsum_fail of the parts' text (numbers written as aten writes them).
template <typename Part, typename... Rest>
inline void einsum_fail(
    std::string text,
    const Part& part,
    const Rest&... rest) {
  if constexpr (std::is_integral_v<Part> && !std::is_same_v<Part, char>) {
    text += std::to_string(part);
  } else {
    text += part;
  }
  einsum_fail(text, rest...);
}

/// A label [A-Za-z] as aten numbers it: A-Z 0-25, a-z 26-51.
template <typename = void>
inline int einsum_subscript(char label) {
  if (label >= 'A' && label <= 'Z') {
    return label - 'A';
  }
  return label - 'a' + 26;
}

/// The label of subscript s (einsum_subscript's inverse).
template <typename = void>
inline char einsum_label(int s) {
  return static_cast<char>(s < 26 ? 'A' + s : 'a' + s - 26);
}

template <typename = void>
inline bool einsum_letter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/// sumproduct_pair(left, right, sum_dims, keepdim true): (left * right)
/// summed over sum_dims, by permute, reshape, bmm, view and permute.
template <typename T>
inline T einsum_pair(
    T left,
    T right,
    const std::vector<int64_t>& sum_dims) {
  if (left.dim() != right.dim()) {
    einsum_fail("number of dimensions must match");
  }
  if (sum_dims.empty()) {
    return mul(left, right);
  }
  const int64_t dim = left.dim();
  std::vector<bool> summed(static_cast<size_t>(dim), false);
  for (int64_t d : sum_dims) {
    summed[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> lro;
  std::vector<int64_t> lo;
  std::vector<int64_t> ro;
  int64_t lro_size = 1;
  int64_t lo_size = 1;
  int64_t ro_size = 1;
  int64_t sum_size = 1;
  for (int64_t i = 0; i < dim; ++i) {
    const bool sl = left.size(i) != 1;
    const bool sr = right.size(i) != 1;
    if (summed[static_cast<size_t>(i)]) {
      if (sl && sr) {
        if (left.size(i) != right.size(i)) {
          einsum_fail("non-broadcast dimensions must match");
        }
        sum_size *= left.size(i);
      } else if (sl) {
        left = sum(left, IntList(i), true);
      } else if (sr) {
        right = sum(right, IntList(i), true);
      }
    } else if (sl && sr) {
      if (left.size(i) != right.size(i)) {
        einsum_fail("non-broadcast dimensions must match");
      }
      lro.push_back(i);
      lro_size *= left.size(i);
    } else if (sl) {
      lo.push_back(i);
      lo_size *= left.size(i);
    } else {
      ro.push_back(i);
      ro_size *= right.size(i);
    }
  }
  std::vector<int64_t> out_size;
  std::vector<int64_t> lperm(lro);
  std::vector<int64_t> rperm(lro);
  for (int64_t d : lro) {
    out_size.push_back(left.size(d));
  }
  for (int64_t d : lo) {
    out_size.push_back(left.size(d));
    lperm.push_back(d);
  }
  for (int64_t d : sum_dims) {
    out_size.push_back(1);
    lperm.push_back(d);
    rperm.push_back(d);
  }
  for (int64_t d : ro) {
    out_size.push_back(right.size(d));
    lperm.push_back(d);
    rperm.push_back(d);
  }
  for (int64_t d : lo) {
    rperm.push_back(d);
  }
  std::vector<int64_t> operm(out_size.size(), -1);
  int64_t at = 0;
  for (int64_t d : lro) {
    operm[static_cast<size_t>(d)] = at++;
  }
  for (int64_t d : lo) {
    operm[static_cast<size_t>(d)] = at++;
  }
  for (int64_t d : sum_dims) {
    operm[static_cast<size_t>(d)] = at++;
  }
  for (int64_t d : ro) {
    operm[static_cast<size_t>(d)] = at++;
  }
  const std::vector<int64_t> lshape{lro_size, lo_size, sum_size};
  const std::vector<int64_t> rshape{lro_size, sum_size, ro_size};
  left = reshape(permute(left, lperm), lshape);
  right = reshape(permute(right, rperm), rshape);
  T result = bmm(left, right);
  return permute(view(result, out_size), operm);
}

/// The labels of each operand (einsum_subscript; 52 for an ellipsis), parsed
/// from the equation's left-hand side with aten's checks.
template <typename = void>
inline std::vector<std::vector<int>> einsum_operand_labels(
    std::string_view lhs,
    size_t num_ops) {
  const int ellipsis = 52;
  std::vector<std::vector<int>> labels(num_ops);
  bool ell_in_input = false;
  size_t curr = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') {
      continue;
    }
    if (c == '.') {
      if (ell_in_input) {
        einsum_fail(
            "einsum(): found '.' for operand ",
            curr,
            " for which an ellipsis was already found");
      }
      const bool room = i + 2 < lhs.size();
      const bool whole = room && lhs[i + 1] == '.' && lhs[i + 2] == '.';
      if (!whole) {
        einsum_fail(
            "einsum(): found '.' for operand ",
            curr,
            " that is not part of any ellipsis");
      }
      i += 2;
      labels[curr].push_back(ellipsis);
      ell_in_input = true;
    } else if (c == ',') {
      ++curr;
      if (curr >= num_ops) {
        einsum_fail(
            "einsum(): fewer operands were provided than specified in the ",
            "equation");
      }
      ell_in_input = false;
    } else {
      if (!einsum_letter(c)) {
        einsum_fail(
            "einsum(): invalid subscript given at index ",
            i,
            " in the equation string, subscripts must be in [a-zA-Z]");
      }
      labels[curr].push_back(einsum_subscript(c));
    }
  }
  if (curr != num_ops - 1) {
    einsum_fail(
        "einsum(): more operands were provided than specified in the equation");
  }
  return labels;
}

/// aten::einsum(equation, operands, path), by the wrappers of its calls.
template <typename T>
inline T einsum_compute(
    std::string_view equation,
    torch::headeronly::HeaderOnlyArrayRef<T> operands,
    const std::optional<IntList>& path) {
  const int total = 52;
  const int ellipsis = 52;
  if (operands.empty()) {
    einsum_fail("einsum(): must provide at least one operand");
  }
  const size_t num_ops = operands.size();
  if (path.has_value()) {
    const size_t path_size = num_ops == 1 ? 1 : (num_ops - 1) * 2;
    if (path->size() != path_size) {
      einsum_fail(
          "einsum(): expected contraction path given in path parameter ",
          "to have size ",
          path_size,
          " but got ",
          path->size());
    }
  }
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  const std::vector<std::vector<int>> op_labels =
      einsum_operand_labels(lhs, num_ops);
  std::vector<int64_t> label_count(total, 0);
  int64_t ell_num_dim = 0;
  for (size_t i = 0; i < num_ops; ++i) {
    const int64_t ndims = operands[i].dim();
    int64_t nlabels = static_cast<int64_t>(op_labels[i].size());
    bool has_ellipsis = false;
    for (int label : op_labels[i]) {
      if (label == ellipsis) {
        --nlabels;
        has_ellipsis = true;
        if (ndims - nlabels > ell_num_dim) {
          ell_num_dim = ndims - nlabels;
        }
      } else {
        ++label_count[static_cast<size_t>(label)];
      }
    }
    if (has_ellipsis ? nlabels > ndims : nlabels != ndims) {
      const char* compared = has_ellipsis ? ") is more than" : ") does not match";
      const char* given = has_ellipsis ? "" : " and no ellipsis was given";
      einsum_fail(
          "einsum(): the number of subscripts in the equation (",
          nlabels,
          compared,
          " the number of dimensions (",
          ndims,
          ") for operand ",
          i,
          given);
    }
  }
  std::vector<int64_t> label_perm_index(total, -1);
  int64_t perm_index = 0;
  int64_t ell_index = 0;
  bool ell_in_output = false;
  if (arrow == std::string_view::npos) {
    perm_index = ell_num_dim;
    ell_in_output = true;
    for (int label = 0; label < total; ++label) {
      if (label_count[static_cast<size_t>(label)] == 1) {
        label_perm_index[static_cast<size_t>(label)] = perm_index++;
      }
    }
  } else {
    const std::string_view rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const char c = rhs[i];
      if (c == ' ') {
        continue;
      }
      if (c == '.') {
        if (ell_in_output) {
          einsum_fail(
              "einsum(): found '.' for output but an ellipsis (...) was ",
              "already found");
        }
        const bool room = i + 2 < rhs.size();
        const bool whole = room && rhs[i + 1] == '.' && rhs[i + 2] == '.';
        if (!whole) {
          einsum_fail(
              "einsum(): found '.' for output that is not part of any ",
              "ellipsis (...)");
        }
        i += 2;
        ell_index = perm_index;
        perm_index += ell_num_dim;
        ell_in_output = true;
        continue;
      }
      if (!einsum_letter(c)) {
        einsum_fail(
            "einsum(): invalid subscript given at index ",
            lhs.size() + 2 + i,
            " in the equation string, subscripts must be in [a-zA-Z]");
      }
      const size_t index = static_cast<size_t>(einsum_subscript(c));
      if (label_count[index] <= 0 || label_perm_index[index] != -1) {
        std::string why = " does not appear in the equation for any input";
        why += " operand";
        if (label_perm_index[index] > -1) {
          why = " appears more than once in the output";
        }
        einsum_fail("einsum(): output subscript ", c, why);
      }
      label_perm_index[index] = perm_index++;
    }
  }
  const int64_t out_num_dim = perm_index;
  if (!ell_in_output) {
    ell_index = perm_index;
    perm_index += ell_num_dim;
  }
  for (int label = 0; label < total; ++label) {
    const size_t l = static_cast<size_t>(label);
    if (label_count[l] > 0 && label_perm_index[l] == -1) {
      label_perm_index[l] = perm_index++;
    }
  }
  std::vector<int64_t> label_size(total, 1);
  std::vector<int64_t> ell_sizes(static_cast<size_t>(ell_num_dim), 1);
  std::vector<uint64_t> dim_counts(static_cast<size_t>(perm_index), 0);
  std::vector<T> ops;
  for (size_t i = 0; i < num_ops; ++i) {
    T op = operands[i];
    std::vector<int64_t> permutation(static_cast<size_t>(perm_index), -1);
    int64_t dim = 0;
    for (int s : op_labels[i]) {
      if (s == ellipsis) {
        const int64_t named = static_cast<int64_t>(op_labels[i].size()) - 1;
        const int64_t ndim = operands[i].dim() - named;
        for (int64_t j = ell_num_dim - ndim; j < ell_num_dim; ++j) {
          const size_t e = static_cast<size_t>(j);
          if (op.size(dim) != 1) {
            if (ell_sizes[e] != 1 && ell_sizes[e] != op.size(dim)) {
              einsum_fail(
                  "einsum(): dimension ",
                  dim,
                  " covered by ellipsis in operand ",
                  i,
                  "has size ",
                  op.size(dim),
                  " which does not broadcast with previously seen ellipsis ",
                  "with size ",
                  ell_sizes[e],
                  " for the respective dimension");
            }
            ell_sizes[e] = op.size(dim);
            ++dim_counts[static_cast<size_t>(ell_index + j)];
          }
          permutation[static_cast<size_t>(ell_index + j)] = dim++;
        }
        continue;
      }
      const int64_t index = label_perm_index[static_cast<size_t>(s)];
      const size_t at = static_cast<size_t>(index);
      if (permutation[at] == -1) {
        const size_t l = static_cast<size_t>(s);
        if (op.size(dim) != 1) {
          if (label_size[l] != 1 && label_size[l] != op.size(dim)) {
            einsum_fail(
                "einsum(): subscript ",
                einsum_label(s),
                " has size ",
                op.size(dim),
                " for operand ",
                i,
                " which does not broadcast with previously seen size ",
                label_size[l]);
          }
          label_size[l] = op.size(dim);
          ++dim_counts[at];
        }
        permutation[at] = dim++;
      } else {
        const int64_t prev_dim = permutation[at];
        if (op.size(dim) != op.size(prev_dim)) {
          einsum_fail(
              "einsum(): subscript ",
              einsum_label(s),
              " is repeated for operand ",
              i,
              " but the sizes don't match, ",
              op.size(dim),
              " != ",
              op.size(prev_dim));
        }
        op = diagonal(op, 0, prev_dim, dim);
        op = movedim(op, -1, prev_dim);
      }
    }
    for (int64_t& val : permutation) {
      if (val == -1) {
        op = unsqueeze(op, dim);
        val = dim++;
      }
    }
    ops.push_back(permute(op, permutation));
  }
  size_t step = 0;
  while (ops.size() > 1) {
    int64_t i = 0;
    int64_t j = 1;
    if (path.has_value()) {
      i = (*path)[step++];
      j = (*path)[step++];
      if (j < i) {
        std::swap(i, j);
      }
      if (i == j || i < 0 || j >= static_cast<int64_t>(ops.size())) {
        const char* itself = ") cannot contract an operand with itself";
        const char* outside = ") operand index is out of bounds";
        einsum_fail(
            "einsum(): invalid contraction (", i, ", ", j, i == j ? itself : outside);
      }
    }
    T a = ops[static_cast<size_t>(i)];
    T b = ops[static_cast<size_t>(j)];
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    std::vector<int64_t> sum_dims;
    std::vector<int64_t> a_dims_to_sum;
    std::vector<int64_t> b_dims_to_sum;
    for (int64_t d = out_num_dim; d < perm_index; ++d) {
      const size_t c = static_cast<size_t>(d);
      if (a.size(d) != 1 && b.size(d) != 1) {
        if (--dim_counts[c] == 1) {
          sum_dims.push_back(d);
          dim_counts[c] = 0;
        }
      } else if (dim_counts[c] == 1) {
        if (a.size(d) != 1) {
          a_dims_to_sum.push_back(d);
          dim_counts[c] = 0;
        } else if (b.size(d) != 1) {
          b_dims_to_sum.push_back(d);
          dim_counts[c] = 0;
        }
      }
    }
    if (!a_dims_to_sum.empty()) {
      a = sum(a, IntList(a_dims_to_sum), true);
    }
    if (!b_dims_to_sum.empty()) {
      b = sum(b, IntList(b_dims_to_sum), true);
    }
    T pair = einsum_pair(a, b, sum_dims);
    if (path.has_value()) {
      ops.push_back(pair);
    } else {
      ops.insert(ops.begin(), pair);
    }
  }
  if (perm_index - out_num_dim > 0) {
    if (num_ops > 1) {
      const auto sizes = ops[0].sizes();
      std::vector<int64_t> kept(sizes.begin(), sizes.begin() + out_num_dim);
      return view(ops[0], kept);
    }
    std::vector<int64_t> sum_dims;
    for (int64_t d = out_num_dim; d < perm_index; ++d) {
      sum_dims.push_back(d);
    }
    return sum(ops[0], IntList(sum_dims), false);
  }
  return ops[0];
}
