"""How a tensor's values follow from its producer's output through views and copies.

Views and copies are not layers (provenance.py), so a consumer's input can be a permuted, sliced or
cast copy of its producer's output. compare checks such an input on each side against that side's
own producer output, replaying the chain written here (the manifest's `via`, docs/MANIFEST.md):
a wrong copy kernel or a wrong transpose is then named on its side, and two correct runs whose
producers differ by rounding never are.

The chain records geometry, not op semantics: a view is the tensor's shape, strides and storage
offset over the storage of the last tensor the chain materialised (its root: the producer's output,
or a copy made since), whose own geometry is recorded with it. Whatever view function made it
(permute, reshape, split, x[..., 1:], .T, unbind, expand), replaying it is a gather.
"""
import torch


def storage_ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:
        return t.storage().data_ptr()


def real_view(t):
    """A complex tensor as the dump holds it, torch.view_as_real's (a trailing dim of 2: real and
    imaginary parts, strides in its real type's elements); any other tensor as it is."""
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def _geometry(t):
    t = real_view(t)
    return list(t.shape), list(t.stride()), t.storage_offset()


def dtype_name(dtype):
    """torch.bfloat16 -> "bfloat16"."""
    return str(dtype).replace("torch.", "")


def _arg_text(v):
    if torch.is_tensor(v):
        return "<tensor>"
    if isinstance(v, slice):
        parts = ["" if v.start is None else _arg_text(v.start), "" if v.stop is None else _arg_text(v.stop)]
        return ":".join(parts + ([_arg_text(v.step)] if v.step is not None else []))
    if v is Ellipsis:
        return "..."
    if isinstance(v, tuple):
        return ", ".join(_arg_text(i) for i in v)
    return repr(v)


def call_text(name, args, kwargs):
    """The call as Python code after the tensor it applies to: `.permute(0, 2, 3, 1)`, `[..., :-1]`."""
    rest = list(args[1:]) if args else []
    if name == "__getitem__":
        return f"[{_arg_text(rest[0]) if rest else ''}]"
    if name == "__get__":
        return ".<attribute>"
    if name == "__iter__":
        return "[<row>]"
    items = [_arg_text(a) for a in rest] + [f"{k}={_arg_text(v)}" for k, v in kwargs.items()]
    return f".{name}({', '.join(items)})"


class Via:
    """A chain from a producer's output to a tensor: `steps` (manifest form) gives the tensor's
    values; `steps[:root_len]` gives the root's, the tensor whose storage later views read, of
    geometry `root` and storage `ptr`; `writes` counts the recorded in-place calls into that storage
    when the chain was made (a later one makes a view's values another thing)."""

    def __init__(self, steps, root_len, root, ptr, dtype, writes):
        self.steps, self.root_len, self.root, self.ptr, self.dtype, self.writes = steps, root_len, root, ptr, dtype, writes

    @staticmethod
    def of_output(t, writes):
        """A layer's output as it is: the empty chain, rooted at the output itself. `writes`: the
        recorder's count of in-place calls by storage."""
        ptr = storage_ptr(t)
        return Via([], 0, _geometry(t), ptr, real_view(t).dtype, writes.get(ptr, 0))

    def view(self, o, text, writes):
        """o, a view of the storage this chain's root lives in; None where it is not one."""
        if storage_ptr(o) != self.ptr or real_view(o).dtype != self.dtype or not self.valid(writes) or o.is_conj():
            return None
        shape, strides, offset = _geometry(o)
        base_shape, base_strides, base_offset = self.root
        if offset < base_offset:
            return None
        earlier = self.steps[self.root_len:]
        text = (earlier[-1]["op"] if earlier else "") + text
        step = {"op": text, "view": {"base_shape": base_shape, "base_strides": base_strides,
                                     "shape": shape, "strides": strides, "offset": offset - base_offset}}
        return Via(self.steps[:self.root_len] + [step], self.root_len, self.root, self.ptr, self.dtype, self.writes)

    def copy(self, o, text, writes):
        """o, a copy of this chain's tensor (cast to o's dtype where it differs): o is the new root."""
        step = {"op": text}
        dtype = real_view(o).dtype
        if dtype != self.dtype:
            step["cast"] = dtype_name(dtype)
        steps = self.steps + [step]
        ptr = storage_ptr(o)
        return Via(steps, len(steps), _geometry(o), ptr, dtype, writes.get(ptr, 0)) if self.valid(writes) else None

    def valid(self, writes):
        """Whether no recorded in-place call wrote into the root's storage since the chain was made."""
        return writes.get(self.ptr, 0) == self.writes
