"""What parity knows of each torch call by its name: the table torch_calls.tsv (beside this file,
and built into parity, so a name cannot mean one thing in Python and another in C++), and how a
call's name is read."""
import os


def _table():
    """torch_calls.tsv beside this file: what parity knows of each torch call, read by compare too:
    its flags, its bound and whether the judge runs it again, by name."""
    rows, bounds, rerun = {}, {}, set()
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_calls.tsv")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, aten, bound, _dtype, flags = line.rstrip("\n").split("\t")
                rows[name], bounds[name] = set(flags.split(",")) - {"-"}, bound
                if aten != "-":
                    rerun.add(name)
    return rows, bounds, rerun


TORCH_CALLS, _BOUNDS, _RERUN = _table()


def _flagged(flag):
    return {name for name, flags in TORCH_CALLS.items() if flag in flags}


# Calls whose result is its input's values as they are (a copy, a move between devices): the result
# keeps its producer, so a consumer's input still points at the producer's output.
SAME_VALUES = _flagged("copy")

# Casts: in a dump written in one float dtype (dump(..., dtype=torch.float32)) a cast between floats is
# a copy, and one run may have a cast the other lacks (a float64 run's `.float()`, a half run's
# `.half()`). They keep their producer, the consumer's input marked derived (its own values).
FLOAT_CASTS = _flagged("cast")

# Calls that are never layers: metadata, conversions to Python values, and parity_torch's own reads;
# among them the reads of a tensor's values into Python numbers.
NOT_LAYERS = _flagged("metadata")
PYTHON_READS = _flagged("python_read")

# Python functions of torch.nn.functional that LibTorch cannot run as one call: they are opened, so
# the calls they make (upsample_bilinear2d, linear, bmm, softmax, dropout in eval) are the layers, each
# of which the judge runs again. A call parity has an op for (nearest interpolate) stays that op.
COMPOSITES = _flagged("composite")

# Calls one kernel computes, element by element or a normalisation over a dim (their bounds say so),
# that autocast leaves as they are: under autocast, kernel_types.py may watch the kernels they run.
# Not the others: a kernel that calls other operators inside (bilinear's _trilinear calls bmm) sees
# them without autocast under a dispatch mode, which would change what the model computes.
SINGLE_KERNELS = {name for name, bound in _BOUNDS.items()
                  if bound in ("rounded", "input_and_output", "one_and_output", "softmax", "log_softmax", "logsumexp",
                               "layer_norm", "group_norm", "moments")
                  and not TORCH_CALLS[name] & {"composite", "lowp", "fp32_autocast"}}

# Calls whose first output is their result and the rest their kernel's own bookkeeping, which each
# path fills its own way (embedding_bag's offset2bag: float32's CPU path leaves it empty): only the
# first is recorded.
FIRST_OUTPUT = _flagged("first_output")

# Calls whose result is memory left as it was (torch.empty, x.new_empty): filled as torch's
# deterministic mode fills it (intercept.py), so that a part the model never writes, carried by the
# calls that fill the rest, holds the same in both runs.
ALLOCATES = _flagged("allocates")


def runs_densely(name):
    """Whether a call on sparse tensors is recorded on their dense forms (intercept.py): one the judge
    runs again (torch.spmm as mm, `adj @ x`) or a copy (`.to_dense()`). A call whose result is
    sparse is not a layer either way: nothing of it can be dumped."""
    name = name[2:-2] if name.startswith("__") and name.endswith("__") else name
    return name in _RERUN or name in SAME_VALUES


# Operators by their dunder names: the function each computes, whichever operand comes first (those
# ops.known_function has an op for; any other dunder is read by its own name).
_OPERATORS = {"__add__": "add", "__radd__": "add", "__gt__": "gt"}


def function_name(name, in_place=False):
    """The function a call's name (as torch reports it) computes: an operator is its function
    (`__add__`, `__radd__`: add), an augmented assignment the function it applies (`x += y`'s
    `__iadd__`: add), and, when the call writes into its tensor, an in-place method the function
    it applies in place (`add_`: add). The one reading of such names in Python."""
    if name.startswith("__i"):
        return name[3:-2]
    if in_place:
        return name.rstrip("_")
    return _OPERATORS.get(name, name)


def torch_name(func):
    """`torch.<name>` for a function, `torch.Tensor.<name>` for a method, `torchvision.<name>` for an op."""
    name = getattr(func, "__name__", str(func))
    qual = getattr(func, "__qualname__", name)
    module = getattr(func, "__module__", None) or ""
    # A method's class: Tensor, or the C class it inherits from (_TensorBase before torch 2.3, TensorBase since).
    if qual.split(".")[0] in ("Tensor", "_TensorBase", "TensorBase"):
        return "torch.Tensor." + name
    if module.startswith("torchvision"):
        return "torchvision.ops." + name
    if module.startswith("torch._ops."):
        return module[len("torch._ops."):] + "." + name
    if module.startswith("torch.nn.functional") or module.startswith("torch._C._nn"):
        return "torch.nn.functional." + name
    return "torch." + name
