"""What one intercepted call's arguments and result hold: its tensors by role, its other arguments,
whether it writes into its first argument, and how a Python function of torch.nn.functional is
opened so the calls it makes are seen one by one."""
import inspect
import types

import torch


def sparse(tensors):
    """Whether any tensor is sparse (no strided storage: nothing to dump, no view to follow)."""
    return any(t.layout != torch.strided for t in tensors)


def tensors_in(value):
    """Tensors in a call's result: a tensor, or a (named) tuple or list of them, in order."""
    if torch.is_tensor(value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if torch.is_tensor(v)]
    return []


def returned_tensors(value, depth=0):
    """Every tensor in what a model returns, in order: inside tuples, lists and dicts (transformers'
    ModelOutput is one), nested."""
    if torch.is_tensor(value):
        return [value]
    if depth > 8:
        return []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else ()
    return [t for v in items for t in returned_tensors(v, depth + 1)]


class _Items:
    """A sequence mixing tensors and other values, as a line writes it: each tensor by its role
    (in<i>_<j>), the rest by repr, so the judge can rebuild the call."""

    def __init__(self, items, i):
        self.text = "(" + ",".join(f"in{i}_{j}" if torch.is_tensor(v) else repr(v) for j, v in enumerate(items)) + ")"

    def __repr__(self):
        return self.text


def arguments(args, kwargs):
    """(role, tensor) for every tensor argument, and (key, value) for the others."""
    tensors, others = [], []
    for i, a in enumerate(args):
        if torch.is_tensor(a):
            tensors.append((f"in{i}", a))
        elif isinstance(a, (tuple, list)) and any(torch.is_tensor(v) for v in a):
            tensors += [(f"in{i}_{j}", v) for j, v in enumerate(a) if torch.is_tensor(v)]
            if not all(torch.is_tensor(v) for v in a):  # x[i, 5 + j, None]: the other items, where they stand
                others.append((f"arg{i}", _Items(a, i)))
        else:
            others.append((f"arg{i}", a))
    for k, v in kwargs.items():
        (tensors if torch.is_tensor(v) else others).append((k, v))
    return tensors, others


def _inplace_position(func):
    """The position of a functional's `inplace` parameter (F.relu(x, inplace)), or None."""
    try:
        names = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return None
    return names.index("inplace") if "inplace" in names else None


# Python's augmented assignments (x += y is __iadd__): they write into x. Not every dunder that
# starts with "__i" does: ~x (__invert__), int(x), index() and iter() read it.
_AUGMENTED = {f"__i{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift",
                                      "and", "xor", "or")}


def in_place(func, name, args, kwargs):
    """Whether the call writes into its first argument (add_, +=, x[i] = v, F.relu(x, inplace=True))."""
    if (name.endswith("_") and not name.endswith("__")) or name in _AUGMENTED or name == "__setitem__" or kwargs.get("out") is not None:
        return True
    if kwargs.get("inplace") is True:
        return True
    pos = _inplace_position(func) if getattr(func, "__module__", "") == "torch.nn.functional" else None
    return pos is not None and len(args) > pos and args[pos] is True


def written(args, kwargs):
    """The tensor an in-place call writes into: its `out=` (torch.cat(xs, out=buf)), else its first
    argument; None when that is no tensor."""
    out = kwargs.get("out")
    if torch.is_tensor(out):
        return out
    return args[0] if args and torch.is_tensor(args[0]) else None


def opened(func):
    """A Python function of torch.nn.functional that runs its own body instead of handing itself to
    the torch function mode again (which would call it once more, whole): its checks for an override
    answer no, so the calls it makes are what the mode sees."""
    names = dict(func.__globals__)
    names.update(has_torch_function=lambda *a: False, has_torch_function_unary=lambda *a: False,
                 has_torch_function_variadic=lambda *a: False)
    body = types.FunctionType(func.__code__, names, func.__name__, func.__defaults__, func.__closure__)
    body.__kwdefaults__ = func.__kwdefaults__
    return body
