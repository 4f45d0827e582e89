"""The prover of kernel `einsum` (shimgen/generate/routes/kernels/einsum.py): aten::einsum as aten's Linear.cpp
computes it (einsum, sumproduct_pair), by the same aten calls in the same order.

Run by each runtime's own interpreter (torch alone): loaded by path by compositions_worker.py, it imports
only the standard library, torch and the workers' shared modules beside that driver."""

import torch

from worker_common import ATEN_RAISES, Tally, aten, outcome, run, weights

ELLIPSIS = 52


def _fail(text):
    raise RuntimeError(f"{text} {ATEN_RAISES}")


def _subscript(c):
    return ord(c) - ord("A") if "A" <= c <= "Z" else ord(c) - ord("a") + 26


def _label(s):
    return chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)


def _letter(c):
    return "A" <= c <= "Z" or "a" <= c <= "z"


def _pair(left, right, sum_dims):
    """sumproduct_pair(left, right, sum_dims, keepdim=True) (kernels/einsum.h einsum_pair)."""
    if left.dim() != right.dim():
        _fail("number of dimensions must match")
    if not sum_dims:
        return aten("mul.Tensor")(left, right)
    dim = left.dim()
    summed = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(dim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    _fail("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = aten("sum.dim_IntList")(left, [i], True)
            elif sr:
                right = aten("sum.dim_IntList")(right, [i], True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                _fail("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims) + \
        [right.shape[d] for d in ro]
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [-1] * len(out_size)
    for at, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = at
    left = aten("reshape.default")(aten("permute.default")(left, lperm), [lro_size, lo_size, sum_size])
    right = aten("reshape.default")(aten("permute.default")(right, rperm), [lro_size, sum_size, ro_size])
    result = aten("bmm.default")(left, right)
    return aten("permute.default")(aten("view.default")(result, out_size), operm)


def _operand_labels(lhs, num_ops):
    labels = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ell_in_input:
                _fail(f"einsum(): found '.' for operand {curr} for which an ellipsis was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                _fail(f"einsum(): found '.' for operand {curr} that is not part of any ellipsis")
            i += 2
            labels[curr].append(ELLIPSIS)
            ell_in_input = True
        elif c == ",":
            curr += 1
            if curr >= num_ops:
                _fail("einsum(): fewer operands were provided than specified in the equation")
            ell_in_input = False
        else:
            if not _letter(c):
                _fail(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must be "
                      "in [a-zA-Z]")
            labels[curr].append(_subscript(c))
        i += 1
    if curr != num_ops - 1:
        _fail("einsum(): more operands were provided than specified in the equation")
    return labels


def einsum(equation, operands, path=None):
    """The generated wrapper (kernels/einsum.h einsum_compute)."""
    if not operands:
        _fail("einsum(): must provide at least one operand")
    num_ops = len(operands)
    if path is not None:
        path_size = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != path_size:
            _fail(f"einsum(): expected contraction path given in path parameter to have size {path_size} but got "
                  f"{len(path)}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _operand_labels(lhs, num_ops)
    label_count = [0] * 52
    ell_num_dim = 0
    for i, operand in enumerate(operands):
        ndims = operand.dim()
        nlabels = len(op_labels[i])
        has_ellipsis = False
        for label in op_labels[i]:
            if label == ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[label] += 1
        if (nlabels > ndims) if has_ellipsis else (nlabels != ndims):
            _fail(f"einsum(): the number of subscripts in the equation ({nlabels}"
                  + (") is more than the number of dimensions (" if has_ellipsis
                     else ") does not match the number of dimensions (")
                  + f"{ndims}) for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given"))
    label_perm_index = [-1] * 52
    perm_index = ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for label in range(52):
            if label_count[label] == 1:
                label_perm_index[label] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                i += 1
                continue
            if c == ".":
                if ell_in_output:
                    _fail("einsum(): found '.' for output but an ellipsis (...) was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    _fail("einsum(): found '.' for output that is not part of any ellipsis (...)")
                i += 3
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
                continue
            if not _letter(c):
                _fail(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the equation string, "
                      "subscripts must be in [a-zA-Z]")
            index = _subscript(c)
            if not (label_count[index] > 0 and label_perm_index[index] == -1):
                _fail(f"einsum(): output subscript {c}" + (" appears more than once in the output"
                                                           if label_perm_index[index] > -1 else
                                                           " does not appear in the equation for any input operand"))
            label_perm_index[index] = perm_index
            perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for label in range(52):
        if label_count[label] > 0 and label_perm_index[label] == -1:
            label_perm_index[label] = perm_index
            perm_index += 1
    label_size = [1] * 52
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, op in enumerate(operands):
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == ELLIPSIS:
                ndim = operands[i].dim() - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op.shape[dim] != 1:
                        if ell_sizes[j] != 1 and ell_sizes[j] != op.shape[dim]:
                            _fail(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                  f"{op.shape[dim]} which does not broadcast with previously seen ellipsis with size "
                                  f"{ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                if op.shape[dim] != 1:
                    if label_size[s] != 1 and label_size[s] != op.shape[dim]:
                        _fail(f"einsum(): subscript {_label(s)} has size {op.shape[dim]} for operand {i} which does "
                              f"not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = op.shape[dim]
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:
                prev_dim = permutation[label_perm_index[s]]
                if op.shape[dim] != op.shape[prev_dim]:
                    _fail(f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes don't match, "
                          f"{op.shape[dim]} != {op.shape[prev_dim]}")
                op = aten("movedim.int")(aten("diagonal.default")(op, 0, prev_dim, dim), -1, prev_dim)
        for k, val in enumerate(permutation):
            if val == -1:
                op = aten("unsqueeze.default")(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(aten("permute.default")(op, permutation))
    step = 0
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = path[step], path[step + 1]
            step += 2
            if j < i:
                i, j = j, i
            if not (i != j and i >= 0 and j < len(ops)):
                _fail(f"einsum(): invalid contraction ({i}, {j}"
                      + (") cannot contract an operand with itself" if i == j else ") operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j]
        del ops[i]
        sum_dims, a_dims, b_dims = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_dims.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_dims.append(d)
                    dim_counts[d] = 0
        if a_dims:
            a = aten("sum.dim_IntList")(a, a_dims, True)
        if b_dims:
            b = aten("sum.dim_IntList")(b, b_dims, True)
        pair = _pair(a, b, sum_dims)
        if path is not None:
            ops.append(pair)
        else:
            ops.insert(0, pair)
    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            return aten("view.default")(ops[0], list(ops[0].shape[:out_num_dim]))
        return aten("sum.dim_IntList")(ops[0], list(range(out_num_dim, perm_index)), False)
    return ops[0]


EQUATIONS = [
    ("ij,jk->ik", [(5, 7), (7, 3)]), ("ij,jk", [(5, 7), (7, 3)]), ("bij,bjk->bik", [(2, 5, 7), (2, 7, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]), ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
    ("ii->i", [(6, 6)]), ("ii", [(6, 6)]), ("iij->j", [(4, 4, 3)]), ("ijj->ij", [(3, 4, 4)]), ("ij->", [(5, 7)]),
    ("ij->ji", [(5, 7)]), ("ij", [(5, 7)]), ("ji", [(5, 7)]), ("i,i->", [(9,), (9,)]), ("i,j->ij", [(4,), (6,)]),
    ("i,i->i", [(9,), (9,)]), ("...ij,...jk->...ik", [(2, 3, 4, 5), (3, 5, 6)]),
    ("...ij,...jk", [(1, 4, 5), (3, 5, 6)]), ("a...b,b...c->a...c", [(2, 3, 4), (4, 3, 5)]), ("...->...", [(2, 3)]),
    ("i...->...", [(4, 2, 3)]), ("...", [()]), ("", [()]), ("->", [()]), ("ij,ij->ij", [(5, 7), (5, 7)]),
    ("ij,ij->", [(5, 7), (5, 7)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]), ("ij,kj->ik", [(5, 7), (3, 7)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("i,i,i->i", [(6,), (6,), (6,)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]), ("bn,anm,bm->ba", [(3, 4), (2, 4, 5), (3, 5)]),
    ("ij,jk->ik", [(5, 1), (1, 3)]), ("ij,jk->ik", [(1, 7), (7, 1)]), ("ij,j->i", [(5, 7), (7,)]),
    ("i j , j k -> i k", [(5, 7), (7, 3)]), ("Ab,bC->AC", [(5, 7), (7, 3)]), ("ij,jk->ik", [(0, 7), (7, 3)]),
    ("ij,jk->ik", [(5, 0), (0, 3)]), ("ij,kl->", [(2, 3), (4, 5)]), ("bij,jk->bik", [(1, 5, 7), (7, 3)]),
    # aten's errors
    ("ij,jk->ik", [(5, 7), (6, 3)]), ("ij,jk->il", [(5, 7), (7, 3)]), ("ij,jk->ii", [(5, 7), (7, 3)]),
    ("i.j,jk->ik", [(5, 7), (7, 3)]), ("i1,jk->ik", [(5, 7), (7, 3)]), ("ij,jk,kl->il", [(5, 7), (7, 3)]),
    ("ij->ik", [(5, 7)]), ("ijk->ik", [(5, 7)]), ("ii->i", [(5, 6)]), ("ij->i.", [(5, 7)]),
    ("...i...,j->", [(5, 7), (3,)]), ("ij,jk->ik", [(5, 7), (7, 3, 2)]), ("...ij,...jk", [(2, 4, 5), (3, 5, 6)]),
    ("ij,jk->i2", [(5, 7), (7, 3)]), ("ij,jk->......", [(5, 7), (7, 3)]), ("i,", [(3,)]),
]


def prove_einsum(op, s):
    """aten::einsum against the wrapper's model (einsum above): every equation (EQUATIONS: explicit and implicit
    outputs, ellipses, repeated labels, broadcast size-1 dimensions, empty operands, one to four operands, spaces,
    upper-case labels, and aten's errors) in float32, float64, bfloat16, float16, int64 and complex64, a transposed
    (not contiguous) operand among them; a contraction path and aten's path errors; results, dtypes, strides and
    errors; float64 gradients of every operand under weighted upstream gradients (aten: CompositeImplicitAutograd,
    so the same calls' derivatives)."""
    f = aten(op)
    t = Tally()
    g = torch.Generator().manual_seed(5)
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64, torch.complex64):
        for k, (eq, shapes) in enumerate(EQUATIONS):
            xs = []
            for n, shape in enumerate(shapes):
                x = (torch.randn(shape, generator=g, dtype=torch.float64) * 3)
                x = x.round().to(dtype) if not (dtype.is_floating_point or dtype.is_complex) else x.to(dtype)
                if (k + n) % 3 == 1 and x.dim() >= 2:
                    x = x.transpose(0, 1).contiguous().transpose(0, 1)  # the same values, not contiguous
                xs.append(x)
            want = run(lambda: f(eq, xs))
            got = outcome(lambda: einsum(eq, xs))
            extra = [r[1].stride() if r[0] == "ok" else None for r in (want, got)]
            t.compare(f"{dtype} {eq!r} {shapes}", want, got, *extra)
            if dtype == torch.float64 and want[0] == "ok" and all(x.numel() for x in xs):
                grads = []
                for fn in (lambda v: f(eq, v), lambda v: einsum(eq, v)):
                    def backward(fn=fn):
                        leaves = [x.clone().requires_grad_() for x in xs]
                        r = fn(leaves)
                        (r * weights(r)).sum().backward()
                        return torch.cat([x.grad.flatten() for x in leaves])
                    grads.append(run(backward))
                t.compare(f"gradient {eq!r} {shapes}", *grads)
    xs = [torch.randn(3, 4, generator=g), torch.randn(4, 5, generator=g), torch.randn(5, 2, generator=g)]
    for path in ([1, 2, 0, 1], [0, 1, 0, 1], [2, 1, 0, 1], [0, 1], [0, 0, 0, 1], [0, 5, 0, 1], [1, 0, 1, 0]):
        want = run(lambda: f("ij,jk,kl->il", xs, path=path))
        got = outcome(lambda: einsum("ij,jk,kl->il", xs, path))
        extra = [r[1].stride() if r[0] == "ok" else None for r in (want, got)]
        t.compare(f"path {path}", want, got, *extra)
    want = run(lambda: f("i", []))
    t.compare("no operand", want, outcome(lambda: einsum("i", [])))
    return t.report()


# the hooks a registry entry's prover_spec may name (`prover`)
PROVERS = {f.__name__: f for f in (prove_einsum,)}
