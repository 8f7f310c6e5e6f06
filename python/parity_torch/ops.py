"""What a recorded PyTorch call is in parity's terms.

A call parity has a reference for gets that op's canonical line (kernels/<op>/<op>.h documents each
line) and the input roles the op names, so `parity compare` can re-run it locally on either side's
inputs. Any other call gets the op `torch.<name>` and a line listing its arguments: compare judges
it by values only, A against B, and cannot check it locally. What parity knows of a call by its
name alone (a copy, a cast, a Python function to open) is torch_calls.py.
"""
import hashlib
import re
import threading

import torch

from .torch_calls import function_name

# dtypes parity's float ops take; a float16 side is judged widened to float32 (docs/DESIGN.md).
FLOATS = (torch.float32, torch.float16)
DTYPE_FIELD = {torch.float64: "float64", torch.int32: "int32", torch.int64: "int64", torch.bool: "bool",
               torch.uint8: "uint8", torch.float16: "float16"}


# The dtype floats are written in when the dump casts them (dump(..., dtype=torch.float32) on a
# float64 run): lines name the dtype of the tensors on disk, which is what compare reads. Per
# thread: two dumps open on two threads may cast differently.
_written = threading.local()


def set_written_float(dtype):
    _written.dtype = dtype


def _dt(t):
    cast = getattr(_written, "dtype", None)
    if cast is not None and t.is_floating_point():
        return cast
    # numpy has no bfloat16: the writer widens it to float32 (every value kept), so that is the
    # dtype a line names, as with dtype=torch.float32.
    return torch.float32 if t.dtype == torch.bfloat16 else t.dtype


def shape_text(t):
    """`2x3`; a complex tensor's real view's shape, marked (`2x3x2c`): what the dump holds of it."""
    if t.is_complex():
        return "x".join(str(d) for d in t.shape) + ("x" if t.dim() else "") + "2c"
    return "x".join(str(d) for d in t.shape) if t.dim() else "scalar"


class Known:
    """A call parity has a reference for: its line and its inputs as (role, tensor)."""

    def __init__(self, op, fields, inputs):
        self.op = op
        self.line = " ".join([op] + [f for f in fields if f])
        self.inputs = inputs


def _hw(key, v, fallback):
    h, w = (v, v) if isinstance(v, int) else tuple(v)
    if (h, w) == (fallback, fallback):
        return ""
    return f"{key}={h}" if h == w else f"{key}={h}x{w}"


def _is_pair_of_ints(v):
    return isinstance(v, int) or (isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(i, int) for i in v))


def conv2d(x, w, b, stride, padding, dilation, groups):
    if not (torch.is_tensor(x) and x.dim() == 4 and _dt(x) in FLOATS and _dt(w) == _dt(x)):
        return None
    if not all(_is_pair_of_ints(v) for v in (stride, padding, dilation)) or not isinstance(groups, int):
        return None  # padding="same"/"valid": not a line parity reads
    inputs = [("x", x), ("w", w)] + ([("b", b)] if b is not None else [])
    fields = [f"x={shape_text(x)}", f"w={shape_text(w)}", "bias" if b is not None else "", _hw("stride", stride, 1),
              _hw("pad", padding, 0), _hw("dilation", dilation, 1), f"groups={groups}" if groups != 1 else ""]
    return Known("conv2d", fields, inputs)


def _float_unary(op, x):
    if not (torch.is_tensor(x) and _dt(x) in FLOATS + (torch.float64,)):
        return None
    return Known(op, [f"x={shape_text(x)}", "dtype=float64" if _dt(x) == torch.float64 else ""], [("x", x)])


def maxpool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices):
    if return_indices or not (torch.is_tensor(x) and x.dim() == 4 and _dt(x) in FLOATS):
        return None
    stride = kernel if stride is None or stride == [] or stride == () else stride
    if not all(_is_pair_of_ints(v) for v in (kernel, stride, padding, dilation)):
        return None
    k = _hw("k", kernel, 0)
    s = "" if stride == kernel else _hw("stride", stride, -1)
    fields = [f"x={shape_text(x)}", k, s, _hw("pad", padding, 0), _hw("dilation", dilation, 1), "ceil" if ceil_mode else ""]
    return Known("maxpool2d", fields, [("x", x)])


def upsample_nearest(x, size, scale_factor, mode):
    if mode != "nearest" or not (torch.is_tensor(x) and x.dim() == 4 and _dt(x) in FLOATS):
        return None
    if size is not None:
        size = (size, size) if isinstance(size, int) else tuple(size)
        if size[0] % x.shape[2] or size[1] % x.shape[3]:
            return None
        scale = (size[0] // x.shape[2], size[1] // x.shape[3])
    elif scale_factor is not None:
        scale = (scale_factor, scale_factor) if not isinstance(scale_factor, (tuple, list)) else tuple(scale_factor)
        if not all(float(s).is_integer() and s >= 1 for s in scale):
            return None
        scale = tuple(int(s) for s in scale)
    else:
        return None
    return Known("upsample_nearest2d", [f"x={shape_text(x)}", _hw("scale", scale, 0)], [("x", x)])


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors or not all(torch.is_tensor(t) for t in tensors) or len({_dt(t) for t in tensors}) != 1:
        return None
    dtype = _dt(tensors[0])
    if dtype not in FLOATS + tuple(DTYPE_FIELD):
        return None
    shapes = ",".join(shape_text(t) for t in tensors)
    dtype_field = f"dtype={DTYPE_FIELD[dtype]}" if dtype in DTYPE_FIELD and dtype != torch.float16 else ""
    return Known("cat", [f"x={shapes}", f"dim={dim}", dtype_field], [(f"x{i}", t) for i, t in enumerate(tensors)])


def add(x, y, alpha=1):
    if alpha != 1 or not (torch.is_tensor(x) and torch.is_tensor(y)) or x.shape != y.shape or _dt(x) != _dt(y):
        return None
    if _dt(x) not in (torch.float32, torch.float64, torch.int32, torch.int64, torch.float16):
        return None
    dtype_field = f"dtype={DTYPE_FIELD[_dt(x)]}" if _dt(x) in (torch.float64, torch.int32, torch.int64) else ""
    return Known("add", [f"x={shape_text(x)}", dtype_field], [("x", x), ("y", y)])


def threshold(x, value):
    # torch's `x > v` with a Python float: parity's threshold op (YOLOv5's confidence mask).
    if not (torch.is_tensor(x) and _dt(x) == torch.float32 and isinstance(value, (int, float)) and not isinstance(value, bool)):
        return None
    return Known("threshold", [f"x={shape_text(x)}", f"value={float(value)!r}"], [("x", x)])


def nonzero(x, as_tuple=False):
    if as_tuple or not torch.is_tensor(x):
        return None
    dtype_field = "" if _dt(x) == torch.bool else f"dtype={DTYPE_FIELD.get(_dt(x), 'float32')}"
    if _dt(x) not in DTYPE_FIELD and _dt(x) != torch.float32:
        return None
    return Known("nonzero", [f"x={shape_text(x)}", dtype_field], [("x", x)])


def argsort(x, dim=-1, descending=False, stable=False):
    # parity's argsort takes ties in any order: a stable one is a torch call, its order checked.
    if stable or not (torch.is_tensor(x) and x.dim() == 1 and _dt(x) == torch.float32 and dim in (0, -1)):
        return None
    return Known("argsort", [f"x={shape_text(x)}", "descending" if descending else ""], [("x", x)])


def max_dim(x, dim, keepdim=False):
    if not (torch.is_tensor(x) and _dt(x) == torch.float32 and isinstance(dim, int)):
        return None
    return Known("max_dim", [f"x={shape_text(x)}", f"dim={dim}", "keepdim" if keepdim else ""], [("x", x)])


def index(x, key):
    """x[key] for the three kinds parity's index op has (kernels/index/index.h); None otherwise."""
    if not torch.is_tensor(x) or _dt(x) not in FLOATS + tuple(DTYPE_FIELD):
        return None
    dtype_field = f"dtype={DTYPE_FIELD[_dt(x)]}" if _dt(x) in DTYPE_FIELD and _dt(x) != torch.float16 else ""
    if torch.is_tensor(key) and key.dtype == torch.bool and 0 < key.dim() <= x.dim() and key.shape == x.shape[:key.dim()]:
        return Known("index", [f"x={shape_text(x)}", f"mask={shape_text(key)}", dtype_field], [("x", x), ("mask", key)])
    if torch.is_tensor(key) and key.dtype == torch.int64 and key.dim() == 1:
        return Known("index", [f"x={shape_text(x)}", f"idx={key.shape[0]}", dtype_field], [("x", x), ("idx", key)])
    if (isinstance(key, tuple) and len(key) == 2 and all(torch.is_tensor(k) and k.dtype == torch.int64 and k.dim() == 1 for k in key)
            and key[0].shape == key[1].shape and x.dim() >= 2):
        return Known("index", [f"x={shape_text(x)}", f"pairs={key[0].shape[0]}", dtype_field], [("x", x), ("i", key[0]), ("j", key[1])])
    return None


def nms(boxes, scores, iou_threshold):
    # torchvision takes any threshold; parity's nms one in [0, 1]: others are recorded by values.
    if not (torch.is_tensor(boxes) and _dt(boxes) == torch.float32 and boxes.dim() == 2 and _dt(scores) == torch.float32
            and 0 <= float(iou_threshold) <= 1):
        return None
    return Known("nms", [f"boxes={shape_text(boxes)}", f"iou={float(iou_threshold)!r}"], [("boxes", boxes), ("scores", scores)])


def batched_nms(boxes, scores, idxs, iou_threshold):
    """torchvision.ops.batched_nms as one call, whichever path torchvision takes inside."""
    plain = nms(boxes, scores, iou_threshold)
    if plain is None or not (torch.is_tensor(idxs) and idxs.dtype == torch.int64 and idxs.dim() == 1):
        return None
    # Boxes of a half type get shifted in that type (torchvision's coordinate trick): said on the line.
    half = {torch.bfloat16: "precision=bf16", torch.float16: "precision=fp16"}.get(boxes.dtype, "")
    return Known("nms", plain.line.split()[1:] + ["by_class", half], plain.inputs + [("idxs", idxs)])


def _arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def known_function(name, args, kwargs, in_place=False):
    """A torch function or Tensor method call (name as torch reports it; `in_place`: the call writes
    into its first argument) as a parity op, or None."""
    name = function_name(name, in_place)
    if any(torch.is_tensor(v) and v.is_complex() for v in _flat(list(args) + list(kwargs.values()))):
        return None  # parity's ops are real: a complex call is a torch call (kernels/aten/torch_dispatch.cpp)
    a = lambda i, key, default=None: _arg(args, kwargs, i, key, default)  # noqa: E731
    try:
        if name in ("conv2d",):
            return conv2d(a(0, "input"), a(1, "weight"), a(2, "bias"), a(3, "stride", 1), a(4, "padding", 0), a(5, "dilation", 1),
                          a(6, "groups", 1))
        if name in ("silu", "sigmoid"):
            return _float_unary(name, a(0, "input"))  # in place too: the recorder keeps the input as it was
        if name in ("max_pool2d", "_max_pool2d"):
            return maxpool2d(a(0, "input"), a(1, "kernel_size"), a(2, "stride"), a(3, "padding", 0), a(4, "dilation", 1),
                             a(5, "ceil_mode", False), a(6, "return_indices", False))
        if name == "interpolate":
            return upsample_nearest(a(0, "input"), a(1, "size"), a(2, "scale_factor"), a(3, "mode", "nearest"))
        if name == "cat":
            return cat(a(0, "tensors"), a(1, "dim", 0))
        if name == "add":
            return add(a(0, "input"), a(1, "other"), a(2, "alpha", 1))
        if name == "gt":
            return threshold(a(0, "input"), a(1, "other"))
        if name == "nonzero":
            return nonzero(a(0, "input"), kwargs.get("as_tuple", False))
        if name == "argsort":
            return argsort(a(0, "input"), a(1, "dim", -1), a(2, "descending", False), kwargs.get("stable", False))
        if name == "max" and (len(args) > 1 or "dim" in kwargs):
            return max_dim(a(0, "input"), a(1, "dim"), a(2, "keepdim", False))
        if name == "__getitem__":
            return index(args[0], args[1])
        if name == "nms":
            return nms(a(0, "boxes"), a(1, "scores"), a(2, "iou_threshold"))
        if name == "batched_nms":
            return batched_nms(a(0, "boxes"), a(1, "scores"), a(2, "idxs"), a(3, "iou_threshold"))
    except (TypeError, ValueError, IndexError, AttributeError):
        return None  # an argument form not foreseen here: values only, never a wrong line
    return None


def _runs_own_forward(module, cls):
    """Whether the module is a `cls` that runs `cls`'s own forward: a subclass that overrides it (timm's
    Conv2dSame pads first) computes something else, recorded by the calls it makes."""
    return isinstance(module, cls) and getattr(type(module).forward, "__code__", None) is cls.forward.__code__


def known_module(module, args):
    """A leaf module call as a parity op (the module's own parameters as inputs), or None."""
    x = args[0] if args else None
    if _runs_own_forward(module, torch.nn.Conv2d) and module.padding_mode == "zeros":
        return conv2d(x, module.weight, module.bias, module.stride, module.padding, module.dilation, module.groups)
    if _runs_own_forward(module, torch.nn.SiLU):
        return _float_unary("silu", x)
    if _runs_own_forward(module, torch.nn.Sigmoid):
        return _float_unary("sigmoid", x)
    if _runs_own_forward(module, torch.nn.MaxPool2d):
        return maxpool2d(x, module.kernel_size, module.stride, module.padding, module.dilation, module.ceil_mode, module.return_indices)
    if _runs_own_forward(module, torch.nn.Upsample):
        return upsample_nearest(x, module.size, module.scale_factor, module.mode)
    return None


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
# A tensor's repr inside an argument (a slice bound, Mask R-CNN's paste_mask_in_image) names its
# device: never part of the call, or a CUDA run would have run another call than a CPU run.
_DEVICE = re.compile(r",device='[^']*'")
# An argument's text is kept whole up to here: an index of four slices (MViTv2's
# attn[:, :, 1:, 1:] = ...) is 87 characters, and one cut short cannot be run again.
_LONGEST_ARGUMENT = 4000


def values_only_line(op, tensors, others):
    """The line of a call parity has no reference for: its tensors' shapes and its other arguments."""
    fields = [f"{role}={shape_text(t)}" for role, t in tensors]
    for key, value in others:
        # An object's repr holds its memory address (quantized weights' packed params): never part
        # of the call, or a model would differ from a copy of itself.
        text = _DEVICE.sub("", "".join(_ADDRESS.sub("", repr(value)).split()))
        if len(text) > _LONGEST_ARGUMENT:  # a huge literal: cut, and its digest keeps two such calls apart
            text = text[:_LONGEST_ARGUMENT] + "...#" + hashlib.sha1(text.encode()).hexdigest()[:16]
        fields.append(f"{key}={text}")
    return " ".join([op] + fields)
