"""Which layer produced each live tensor, and how its values follow from that layer's output.

Views (reshape, slicing, permute) and copies (clone, .cpu()) are not layers: their result keeps its
producer, with the chain of views and copies that made it (`via`, views.py), which compare replays
on each side. A recorded in-place call into a storage (add_, +=, x[i] = v) makes the chains read
from it another thing: the writes into each storage are counted, and its writers logged.
"""
import weakref

import torch

from . import torch_calls
from .views import Via, real_view, storage_ptr
from .writer import DTYPE_NAMES


def version_of(t):
    try:
        return t._version
    except RuntimeError:
        return None  # inference tensors keep no version counter: trust the recorded in-place layers


def layer_dtype(t, cast=None):
    t = real_view(t)  # a complex tensor is written as its real view
    dtype = cast if cast is not None and t.is_floating_point() else t.dtype
    return DTYPE_NAMES.get(dtype, "float32" if dtype == torch.bfloat16 else "int32")


class _Prov:
    """Where a live tensor's values came from: a layer's output, as it was then, through `via`
    (views.Via; None where the chain is not known)."""

    def __init__(self, layer, role, file, version, derived, via, also_from=()):
        self.layer, self.role, self.file, self.version, self.derived, self.via = layer, role, file, version, derived, via
        self.ptr, self.writes = None, 0  # the tensor's storage and the recorded writes into it, as remembered
        # Other layer outputs (layer, role) whose values the tensor may hold where `layer`'s did not
        # write: what its storage held before a partial in-place write (y[:, :3].add_(1) after
        # y.clamp_()), and earlier such writes.
        self.also_from = tuple(also_from)[:1] + tuple(also_from)[1:][-63:]  # as the manifest keeps them


class Provenance:
    """The provenance of every live tensor a recorded layer made (by id, forgotten when the tensor
    is), and the recorded in-place writes by storage. `cast`: the dtype the dump writes floats in."""

    def __init__(self, cast):
        self.cast = cast
        self.prov = {}
        self.writes = {}  # storage pointer -> recorded in-place calls into it (views.Via.valid)
        # storage pointer -> (the write's count, its output) for each recorded in-place call into it, in order
        self.write_log = {}

    def of(self, t):
        entry = self.prov.get(id(t))
        if entry is None or entry[0]() is not t:
            return None
        return entry[1]

    def producer(self, t):
        """The layer whose output t is (as it was, or through views and copies), or None."""
        p = self.of(t)
        return p.layer if p is not None else None

    def source(self, t):
        """What t's values came from last (current()), or None for data the run was given. A tensor
        of no layer's, whose storage a recorded in-place call wrote into (a KV cache's buffer after
        buf[:, t].copy_(k) into a view of it), came from that call's output last."""
        p = self.of(t)
        if p is None and torch.is_tensor(t):
            ptr = storage_ptr(t)
            log = self.write_log.get(ptr)
            writer = log[-1][1] if log else None
            if writer is not None:
                earlier = [(w.layer, w.role) for _, w in log[:-1] if w is not None]
                return _Prov(writer.layer, writer.role, None, version_of(t), True, None, earlier)
        return self.current(p)

    def current(self, p):
        """p, or, when a recorded in-place call has written since into the storage p's chain reads
        or the tensor's own (y[:, :2].mul_(2) after y was made), the latest such call's output: what
        the values came from last, the dataflow a defect there propagates through. Such a tensor has
        no chain to replay."""
        if p is None:
            return p
        writers = []  # every recorded write since p was made, into the storage its chain reads or its own
        if p.via is not None and not p.via.valid(self.writes):
            writers += [w for count, w in self.write_log.get(p.via.ptr, []) if count > p.via.writes]
        if p.ptr is not None and self.writes.get(p.ptr, 0) != p.writes:
            writers += [w for count, w in self.write_log.get(p.ptr, []) if count > p.writes]
        writers = [w for w in writers if w is not None and w.layer is not p.layer]
        if not writers:
            return p
        writer = max(writers, key=lambda w: w.layer.index)
        # A write may cover part of the tensor only: the rest holds p's values, or an earlier write's.
        earlier = [(p.layer, p.role)] + list(p.also_from) + [(w.layer, w.role) for w in writers if w is not writer]
        return _Prov(writer.layer, writer.role, None, p.version, True, None, earlier)

    def remember(self, t, p):
        p.ptr = storage_ptr(t)
        p.writes = self.writes.get(p.ptr, 0)
        key = id(t)
        self.prov[key] = (weakref.ref(t, lambda _, key=key: self.prov.pop(key, None)), p)

    def produced(self, o, layer, role, file):
        """o is the output `role` of `layer`, written as `file`: the root of any chain from it."""
        self.remember(o, _Prov(layer, role, file, version_of(o), False, Via.of_output(o, self.writes)))

    def wrote_into(self, t):
        """A recorded call wrote into t's storage: views of it made before now no longer show what
        their chain gives."""
        ptr = storage_ptr(t)
        self.writes[ptr] = self.writes.get(ptr, 0) + 1

    def last_write_by(self, target):
        """target's provenance, as its layer recorded it, is the last write into its storage."""
        ptr = storage_ptr(target)
        self.write_log.setdefault(ptr, []).append((self.writes.get(ptr, 0), self.of(target)))

    def as_written(self, p, now):
        """Whether a tensor from p, of version `now`, holds p's output file as it is."""
        # Inference tensors keep no version: a recorded in-place call into the storage says it
        # changed since (views.Via.valid), with or without one.
        unwritten = p.via is None or p.via.valid(self.writes)
        return not p.derived and p.file is not None and (now is None or now == p.version) and unwritten

    def chain(self, p):
        """The steps that make a tensor from p's output (the manifest's `via`), or None where a
        recorded in-place call wrote into the chain's storage since it was made."""
        return p.via.steps if p.via is not None and p.via.valid(self.writes) else None

    def mark_read_as_python(self, args):
        """A layer output read as Python numbers (float(t), t.item()): marked, so that compare knows a
        layer one run alone has, whose values went nowhere else, fed only such numbers."""
        for t in args:
            p = self.of(t) if torch.is_tensor(t) else None
            if p is not None:
                for out in p.layer.outputs:
                    if out["role"] == p.role:
                        out["to_python"] = True

    def pass_through(self, name, tensors, outputs, text):
        """Views and copies are not layers: their results keep their producer (derived when reshaped),
        with the chain from it (`text`: the call, for messages)."""
        def written_cast(t, o):  # a float cast that the dump's written dtype makes a copy
            return (name in torch_calls.FLOAT_CASTS and t.is_floating_point() and o.is_floating_point() and t.dtype != o.dtype
                    and layer_dtype(t, self.cast) == layer_dtype(o, self.cast))
        for o in outputs:
            same_storage = [t for _, t in tensors if o.numel() and storage_ptr(t) == storage_ptr(o)]
            copy = [t for _, t in tensors if t.shape == o.shape and
                    ((name in torch_calls.SAME_VALUES and t.dtype == o.dtype) or written_cast(t, o))]
            if not same_storage and not copy:
                return False
        for o in outputs:
            src = next((t for _, t in tensors if o is t), None)
            if src is not None:
                continue  # the call returned its input itself
            base = next((t for _, t in tensors if o.numel() and storage_ptr(t) == storage_ptr(o)), None)
            copied = base is None
            base = base if base is not None else next(t for _, t in tensors if t.shape == o.shape)
            p = self.source(base)
            if p is None:
                continue
            # A copy is a kernel that may be wrong (a cast, .contiguous(), .cpu()): its consumer
            # records its own input, checked against the chain. A view in place is the output as is.
            same_place = o.shape == base.shape and o.stride() == base.stride() and o.storage_offset() == base.storage_offset()
            as_is = not copied and same_place and self.keeps_values(base, o) and o.is_conj() == base.is_conj()  # conj(): other values
            via = None
            if p.via is not None:
                via = p.via.copy(o, text, self.writes) if copied else p.via.view(o, text, self.writes)
            self.remember(o, _Prov(p.layer, p.role, p.file if as_is and not p.derived else None, version_of(o),
                                   p.derived or not as_is, via, p.also_from))
        return True

    def keeps_values(self, base, o):
        """Whether o holds base's values as the dump writes base: the same dtype, a cast that loses
        nothing (bfloat16 or float16 to float32, any float to float64), or the cast a float64 run
        written as float32 makes (its file holds base rounded so already)."""
        if o.dtype == base.dtype:
            return True
        if not (o.is_floating_point() and base.is_floating_point()):
            return False
        if o.dtype == torch.float64 or (o.dtype == torch.float32 and base.dtype in (torch.bfloat16, torch.float16)):
            return True
        return self.cast is not None and o.dtype == self.cast and base.dtype == torch.float64
