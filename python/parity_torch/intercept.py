"""Every tensor computation that is not a recorded leaf module, seen through a TorchFunctionMode (and
the process-wide wrappers of patches.py, for the calls torch 1.13's mode does not see): torch.cat,
`+`, F.silu, indexing, torchvision's nms, and the functions inside leaf modules parity has no op for
(BatchNorm2d's batch_norm, ReLU's relu). A call becomes a layer; a view or a copy keeps its producer
(provenance.py); a factory (zeros, arange) is a layer without inputs."""
import contextlib
import functools
import time
import types
import weakref

import torch
from torch.overrides import TorchFunctionMode

from . import calls, kernel_types, manifest, ops, patches, torch_calls
from .naming import short_name
from .provenance import version_of
from .views import call_text
from .writer import storable


def fill_as_deterministic(tensors):
    """Memory a call left as it was (torch.empty), filled as torch.use_deterministic_algorithms
    fills it: NaN, or the largest value of an integer type. A model that writes all of it before
    reading it computes the same; rows it never writes (AdaptiveLogSoftmaxWithLoss's gather
    indices, filled cluster by cluster) hold the same in both runs instead of each allocator's."""
    with torch.no_grad():
        for t in tensors:
            if t.layout != torch.strided or t.is_quantized or t.numel() == 0:
                continue  # sparse, quantized, empty: left as made (the recorder skips or keeps them as before)
            try:
                if t.is_floating_point() or t.is_complex():
                    t.fill_(float("nan"))
                elif t.dtype == torch.bool:
                    t.fill_(True)
                else:
                    t.fill_(torch.iinfo(t.dtype).max)
            except (RuntimeError, TypeError):
                pass  # a dtype fill_ or iinfo does not take: its memory as it was, as without the recorder


# The most elements a sparse tensor's dense form may hold (256 MiB of float32): a graph's adjacency
# beyond it (a million nodes' is 10^12) stays unrecorded, as it ran, rather than filling memory.
DENSE_FORM_LIMIT = 1 << 26


def densifiable(t):
    """Whether a call's tensor can be recorded as its dense form: a dense one; a sparse one within
    DENSE_FORM_LIMIT, without repeated indices (a kernel adds each of those as a term of its own,
    more than the dense call's bound allows for)."""
    if t.layout == torch.strided:
        return True
    if t.numel() > DENSE_FORM_LIMIT:
        return False
    return t.layout != torch.sparse_coo or t.is_coalesced() or t._nnz() == t.coalesce()._nnz()


def swapped(value, forms):
    """`value` (an argument) with each tensor whose id is in `forms` replaced by its form, in lists
    and tuples too."""
    if torch.is_tensor(value):
        return forms.get(id(value), value)
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(swapped(v, forms) for v in value)
    return value


class _Mode(TorchFunctionMode):
    def __init__(self, functions):
        super().__init__()
        self.functions = functions

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.functions.on_function(func, args, kwargs or {})


class FunctionCalls:
    """The function calls `recorder` (recorder.Recorder) sees while a block is open, and those it
    could not record (`skipped`: (op, layer) -> calls with sparse or complex32 tensors)."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.mode = None
        self.skipped = {}
        self.dense_of = {}  # id(sparse tensor) -> (its weakref, the dense tensor it holds the values of, that one's version)

    def enter(self):
        self.mode = _Mode(self)
        self.mode.__enter__()

    def leave(self):
        patches.pop_mode(self.mode)

    def patched(self, inner):
        """`inner` (a patched entry point, or the next recorder's wrapper of it) through this
        recorder: the call goes through on_function once; inside it the mode sees the original
        call while busy and lets it pass."""
        r = self.recorder

        def call(*args, **kwargs):
            if r.busy or not r.recording():
                return inner(*args, **kwargs)
            name = getattr(inner, "__name__", "")
            if name in torch_calls.COMPOSITES and ops.known_function(name, args, kwargs) is None:
                return inner(*args, **kwargs)  # not one parity knows: the calls inside are the layers
            return self.on_function(inner, args, kwargs)
        functools.update_wrapper(call, inner)
        return call

    def skip(self, func, name):
        """A call whose tensors cannot go into a dump (sparse, complex): the model's own result
        stands, the call is not a layer, and it is named at the end and in the manifest."""
        frame = self.recorder.names.frame()
        short = short_name(name)
        key = (torch_calls.torch_name(func), f"{frame.path}.{short}" if frame.path else short)
        self.skipped[key] = self.skipped.get(key, 0) + 1

    def on_function(self, func, args, kwargs):
        r = self.recorder
        name = getattr(func, "__name__", "")
        if not r.recording():
            return func(*args, **kwargs)
        if name in ("__get__", "__iter__"):
            return self.attribute_or_rows(func, name, args, kwargs)
        if name in torch_calls.NOT_LAYERS:
            if name in torch_calls.PYTHON_READS:
                r.sources.mark_read_as_python(args)
            return func(*args, **kwargs)
        if name in torch_calls.COMPOSITES and isinstance(func, types.FunctionType) and ops.known_function(name, args, kwargs) is None:
            with self.mode:  # the mode is off while it handles a call: on again for the calls inside
                return calls.opened(func)(*args, **kwargs)
        ops.set_written_float(r.cast)
        call_args, call_kwargs = args, kwargs  # what the model passed; args and kwargs as recorded
        tensors, others = calls.arguments(args, kwargs)
        others = [(k, self.held_as_numbers(v)) for k, v in others]
        in_place = calls.in_place(func, name, args, kwargs)
        target = calls.written(args, kwargs) if in_place else None
        before = buffers = None
        r.busy += 1
        try:
            sparse = calls.sparse(t for _, t in tensors)
            if sparse and not in_place and torch_calls.runs_densely(name) and all(densifiable(t) for _, t in tensors):
                # recorded as the same call on the dense forms; the model's own call runs on its own tensors
                forms = {id(t): self.dense_form(t) for _, t in tensors if t.layout != torch.strided}
                tensors, sparse = [(role, forms.get(id(t), t)) for role, t in tensors], False
                args, kwargs = swapped(args, forms), {k: swapped(v, forms) for k, v in kwargs.items()}
            if not sparse:
                if target is not None:
                    before = (target.detach().clone(), version_of(target))  # the input as it was, before the call changes it
                # Buffers a call may update as it reads them (batch_norm's running statistics in training,
                # written by its kernel with no version change): recorded as the call read them.
                buffers = {id(t): t.detach().clone() for _, t in tensors if r.files.is_buffer(t) and t is not target}
        finally:
            r.busy -= 1
        if sparse:
            return self.unrecorded(func, name, args, kwargs)  # no storage to dump or follow
        regions = manifest.autocast_now()
        watch = kernel_types.watcher(name, in_place, tensors, regions)
        r.autocast |= manifest.autocast_met((t for _, t in tensors), regions)  # also a region entered inside forward
        started = time.perf_counter()
        r.busy += 1
        try:
            with watch or contextlib.nullcontext():
                result = func(*call_args, **call_kwargs)
            if name in torch_calls.ALLOCATES:
                fill_as_deterministic(calls.tensors_in(result))
        finally:
            r.busy -= 1
        elapsed = (time.perf_counter() - started) * 1e3
        outputs = [target] if target is not None else calls.tensors_in(result)
        if name in torch_calls.FIRST_OUTPUT:
            outputs = outputs[:1]
        r.busy += 1
        try:
            if not outputs or not all(storable(t) for t in outputs):
                return result  # quantized (or complex32): not a layer
            if calls.sparse(outputs):
                if not self.follow_sparse(name, tensors, outputs) and not self.record_sparse(func, name, args, kwargs, tensors, others, outputs, elapsed):
                    self.skip(func, name)
                return result
            # A factory (zeros, arange, rand) is a layer without inputs, so that what it makes has a
            # producer: an input without one is data the run was given, compared bit for bit.
            if target is None and tensors and r.sources.pass_through(name, tensors, outputs, call_text(name, self.text_args(args), kwargs)):
                return result
            if r.record_inputs and not all(storable(t) for _, t in tensors):
                self.skip(func, name)  # no dtype of parity's holds it (complex32): named, not written
                return result
            layer = self.record_function(func, name, args, kwargs, tensors, others, outputs, target, before, elapsed, buffers)
            layer.kernels_in = kernel_types.kernels_in(watch, name, in_place, tensors, outputs, regions)
        finally:
            r.busy -= 1
        return result

    def held_as_numbers(self, v):
        """`v` as a line or a view's chain writes it: an integer 0-d tensor no recorded call made (a
        slice bound the model holds, `canvas[self.corner:6]`) as its number. It is the model's code,
        as a literal would be, not data the runs may round apart: a crop at another corner the
        model holds is another call, where one at a corner it computes may follow the data."""
        if torch.is_tensor(v):
            integral = not (v.is_floating_point() or v.is_complex() or v.dtype == torch.bool)
            if v.dim() != 0 or not integral or self.recorder.sources.source(v) is not None:
                return v
            self.recorder.busy += 1  # the recorder's own read: not one the model made into Python
            try:
                return int(v)
            finally:
                self.recorder.busy -= 1
        if isinstance(v, slice):
            return slice(self.held_as_numbers(v.start), self.held_as_numbers(v.stop), self.held_as_numbers(v.step))
        if isinstance(v, (tuple, list)) and not hasattr(v, "_fields"):  # not a named tuple (torch.Size is a tuple)
            return type(v)(self.held_as_numbers(i) for i in v)
        return v

    def text_args(self, args):
        """A call's arguments as its view's chain writes them: after the tensor it applies to, held
        slice bounds as numbers (held_as_numbers)."""
        return tuple(args[:1]) + tuple(self.held_as_numbers(a) for a in args[1:])

    def dense_form(self, t):
        """A call's tensor as the dump holds it: a sparse one as its dense values (a sum, a product and
        a copy of it compute the same on them), the very dense tensor it was made from where it
        still holds them (`x.to_sparse()`: so its producer stays), else a new one no layer made."""
        if t.layout == torch.strided:
            return t
        made = self.dense_of.get(id(t))
        if made is not None and made[0]() is t and version_of(made[1]) == made[2]:
            return made[1]
        self.recorder.busy += 1
        try:
            return t.to_dense()
        finally:
            self.recorder.busy -= 1

    def follow_sparse(self, name, tensors, outputs):
        """A sparse copy of one dense tensor's values (`x.to_sparse()`, `.coalesce()`): not a layer,
        but its dense form is a copy of that tensor as it is now (the model may change the tensor
        in place after), which keeps its producer, so a call that reads it densely does too."""
        dense = [t for _, t in tensors]
        if name not in torch_calls.SAME_VALUES or len(dense) != 1 or len(outputs) != 1 or not densifiable(dense[0]):
            return False
        o, t = outputs[0], self.dense_form(dense[0])
        if o.shape != t.shape or o.dtype != t.dtype:
            return False
        if self.recorder.sources.source(t) is not None:
            kept = t.detach().clone()
            if self.recorder.sources.pass_through("clone", [("in0", t)], [kept], call_text(name, (t,), {})):
                t = kept
        self.stands_for(o, t)
        return True

    def record_sparse(self, func, name, args, kwargs, tensors, others, outputs, elapsed):
        """A sparse result of a call the judge runs again (a `sparse_coo_tensor` of computed edge
        weights, `torch.sparse.mm` of two sparse tensors): a layer whose output is the result's
        dense form, which then stands for it, so the calls that read it keep it as their producer."""
        if not torch_calls.runs_densely(name) or name in torch_calls.SAME_VALUES or len(outputs) != 1:
            return False
        if not all(densifiable(t) for _, t in tensors) or not densifiable(outputs[0]):
            return False  # a repeated index is a sum the dense form does not show
        dense = outputs[0].to_dense()
        self.record_function(func, name, args, kwargs, tensors, others, [dense], None, None, elapsed)
        self.stands_for(outputs[0], dense)
        return True

    def stands_for(self, sparse, dense):
        """From now on `dense` is `sparse`'s dense form (while neither changes)."""
        key = id(sparse)
        self.dense_of[key] = (weakref.ref(sparse, lambda _: self.dense_of.pop(key, None)), dense, version_of(dense))

    def unrecorded(self, func, name, args, kwargs):
        """Runs a call the dump cannot hold, as the model would without the recorder, and names it."""
        r = self.recorder
        r.busy += 1
        try:
            result = func(*args, **kwargs)
        finally:
            r.busy -= 1
        self.skip(func, name)
        return result

    def attribute_or_rows(self, func, name, args, kwargs):
        """x.T, x.mT, x.data (a tensor attribute) and `for row in x` / `i, j = x.T` (rows): views
        of x that keep its producer."""
        r = self.recorder
        r.busy += 1
        try:
            result = func(*args, **kwargs)
            items = list(result) if name == "__iter__" else [result]
            outputs = [t for t in items if torch.is_tensor(t)]
            tensors, _ = calls.arguments(args, kwargs)
            if outputs and tensors and not calls.sparse(outputs + [t for _, t in tensors]):  # a sparse view: no storage
                r.sources.pass_through(name, tensors, outputs, call_text(name, self.text_args(args), kwargs))
        finally:
            r.busy -= 1
        return iter(items) if name == "__iter__" else result

    def record_function(self, func, name, args, kwargs, tensors, others, outputs, target, before, elapsed, updated=None):
        r = self.recorder
        known = ops.known_function(name, args, kwargs, in_place=target is not None) if name != "__setitem__" else None
        if known is not None:
            op, line, inputs, short = known.op, known.line, known.inputs, known.op
        else:
            op = torch_calls.torch_name(func)
            line = ops.values_only_line(op, tensors, others)
            inputs, short = tensors, short_name(name)
        layer = r.names.new_layer(op, line, r.names.frame(), short)
        layer.time_ms = elapsed
        if r.record_inputs:
            for role, t in inputs:
                if target is not None and t is target:
                    layer.inputs.append(r.files.input_entry(layer, role, before[0], like=target, version=before[1]))
                elif updated and id(t) in updated:
                    layer.inputs.append(r.files.input_entry(layer, role, updated[id(t)], like=t, fresh=True))
                else:
                    layer.inputs.append(r.files.input_entry(layer, role, t))
        if target is not None:  # views of it made before now no longer show what the chain gives
            r.sources.wrote_into(target)
        r.files.record_outputs(layer, outputs)
        if target is not None:
            r.sources.last_write_by(target)
        return layer
