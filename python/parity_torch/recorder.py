"""Records a PyTorch model's calls as parity layers.

Two sources of layers:
- leaf modules parity has an op for (Conv2d, SiLU, Sigmoid, MaxPool2d, Upsample): one layer named by
  the module path, with the module's parameters as inputs; nothing inside them is recorded;
- every other tensor computation, seen through a TorchFunctionMode: torch.cat, `+`, F.silu, indexing,
  torchvision's nms, and also the functions inside leaf modules parity has no op for (BatchNorm2d's
  batch_norm, ReLU's relu). Such a layer is named `<enclosing module>.<op>` (`.1`, `.2` for later
  ones in the same module call), or just `<enclosing module>` for the call whose output the module
  returns, as parity names YOLOv5's Concat (`model.12`) and Bottleneck's residual add (`model.2.m.0`).
A module called again in one forward is `<path>:<k>`; factories (zeros, arange) are layers without
inputs, so an input without a producer is data the run was given.
Views (reshape, slicing, permute) and copies (clone, .cpu()) are not layers: their result keeps its
producer, and a consumer's input that is not that producer's output as is gets `"derived": true` and
the chain of views and copies that made it (`via`, views.py), which compare replays on each side.
What parity knows of each call (a copy, a cast, a Python function to open...) is ops.py's reading of
torch_calls.tsv, the table compare reads too.
"""
import functools
import inspect
import re
import sys
import threading
import time
import types
import weakref

import torch
from torch.overrides import TorchFunctionMode

from . import ops, patches
from .views import Via, call_text, storage_ptr
from .writer import DTYPE_NAMES, DumpFolder, storable, to_numpy

VERSION = "0.1.0"


def _version(t):
    try:
        return t._version
    except RuntimeError:
        return None  # inference tensors keep no version counter: trust the recorded in-place layers


def _sparse(tensors):
    """Whether any tensor is sparse (no strided storage: nothing to dump, no view to follow)."""
    return any(t.layout != torch.strided for t in tensors)


def _tensors_in(value):
    """Tensors in a call's result: a tensor, or a (named) tuple or list of them, in order."""
    if torch.is_tensor(value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if torch.is_tensor(v)]
    return []


class _Items:
    """A sequence mixing tensors and other values, as a line writes it: each tensor by its role
    (in<i>_<j>), the rest by repr, so the judge can rebuild the call."""

    def __init__(self, items, i):
        self.text = "(" + ",".join(f"in{i}_{j}" if torch.is_tensor(v) else repr(v) for j, v in enumerate(items)) + ")"

    def __repr__(self):
        return self.text


def _arguments(args, kwargs):
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


def _in_place(func, name, args, kwargs):
    """Whether the call writes into its first argument (add_, +=, x[i] = v, F.relu(x, inplace=True))."""
    if (name.endswith("_") and not name.endswith("__")) or name.startswith("__i") or name == "__setitem__" or kwargs.get("out") is not None:
        return True
    if kwargs.get("inplace") is True:
        return True
    pos = _inplace_position(func) if getattr(func, "__module__", "") == "torch.nn.functional" else None
    return pos is not None and len(args) > pos and args[pos] is True


class _Prov:
    """Where a live tensor's values came from: a layer's output, as it was then, through `via`
    (views.Via; None where the chain is not known)."""

    def __init__(self, layer, role, file, version, derived, via):
        self.layer, self.role, self.file, self.version, self.derived, self.via = layer, role, file, version, derived, via
        self.ptr, self.writes = None, 0  # the tensor's storage and the recorded writes into it, as remembered


class _Frame:
    """One module call in progress: its path, and the function layers named inside it."""

    def __init__(self, path, layer=None, module=None):
        self.path, self.layer, self.module, self.named, self.counts = path, layer, module, [], {}
        self.inputs = []  # a recorded leaf's tensor arguments and their versions as it began


class _Layer:
    def __init__(self, index, op, line, frame, short):
        self.index, self.op, self.line, self.frame, self.short = index, op, line, frame, short
        self.occurrence = 0
        self.name = None  # decided when the enclosing module call ends
        self.inputs, self.outputs, self.time_ms = [], [], 0.0


class _Mode(TorchFunctionMode):
    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self.recorder.on_function(func, args, kwargs or {})


class Recorder:
    def __init__(self, out_dir, model, inputs, layers, calls, force, name, dtype):
        if not isinstance(model, torch.nn.Module):
            raise TypeError("parity_torch: dump: model must be a torch.nn.Module")
        if isinstance(calls, int):
            if calls < 1:
                raise ValueError("parity_torch: dump: calls must be at least 1")
            self.selected = set(range(calls))
        else:
            self.selected = set(int(c) for c in calls)
            if not self.selected or min(self.selected) < 0:
                raise ValueError("parity_torch: dump: calls must name forward calls 0, 1, ...")
        self.filter = re.compile(layers) if layers else None
        self.model, self.record_inputs, self.name = model, inputs, name or type(model).__name__
        self.folder = DumpFolder(out_dir, force)
        self.paths = {m: p for p, m in model.named_modules()}
        self.leaves = {m for m in self.paths if next(m.children(), None) is None}
        self.layers, self.prov, self.param_files = [], {}, {}
        self.writes = {}  # storage pointer -> recorded in-place calls into it (views.Via.valid)
        self.last_writer = {}  # storage pointer -> the output of the last recorded in-place call into it
        self.stack, self.root = [], _Frame("")
        self.path_calls = {}  # module path -> its calls so far in this forward
        self.call = -1  # forward calls of `model` so far, minus one
        self.busy = 0   # > 0 inside parity_torch's own code and inside recorded leaf modules
        self.devices = set()
        self.autocast = set()  # autocast regions seen in force ("cuda:float16"), for run.precision
        self.tf32 = None       # (cuDNN, matmul) TF32 switches as the block began
        self.cast = dtype
        self.buffer_ids = {id(b) for b in model.buffers()}
        self.hooks, self.mode = [], None
        self.done = self.failed = False
        self.thread_error = None  # a model call on another thread: the dump cannot complete
        self.thread = None     # the thread whose open block records, or None between blocks
        self.skipped = {}      # (call, layer) -> calls not recorded: their tensors cannot be stored
        self.told_pending = False

    # -- entering and leaving the `with` block --------------------------------------------------
    def enter(self):
        if self.failed:
            raise RuntimeError(f"parity_torch: {self.folder.path}: this dump was abandoned "
                               f"({self.abandoned or 'an exception'}); start a new one")
        if self.done:
            return
        if self.thread is not None:
            # One block at a time: a second would record every call twice, and its exit end the first.
            # From another thread its calls would also interleave with the open block's: abandoned.
            here = threading.current_thread().name
            if threading.get_ident() != self.thread:
                self.thread_error = f"the dump was entered on thread {here!r} while open on thread {self.thread_name!r}"
            raise RuntimeError(f"parity_torch: {self.folder.path}: this dump is already open (a with block or a wrapped "
                               f"call, on thread {self.thread_name!r}); a dump object is entered by one block at a time"
                               + ("; dump abandoned, no manifest will be written" if self.thread_error else ""))
        self.thread, self.thread_name = threading.get_ident(), threading.current_thread().name
        if self.tf32 is None:
            self.tf32 = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        self.autocast |= _autocast_now()
        for m in self.paths:
            if isinstance(m, torch.jit.ScriptModule):
                continue  # takes no hooks: a scripted submodule runs as one call, its own calls unseen
            self.hooks.append(m.register_forward_pre_hook(self.pre_hook))
            self.hooks.append(m.register_forward_hook(self.post_hook))
        patches.install()
        patches.active().append(self)
        self.mode = _Mode(self)
        self.mode.__enter__()

    def past_selection(self):
        """Whether the model's calls went past the selected ones: their post-processing is over."""
        return self.call > max(self.selected)

    def exit(self, failed, finish=None, block=True):
        """Leaves a block; writes the manifest when `finish` (by default: once the last selected
        call has run, its post-processing being inside the same block). `block`: a with block
        (not a wrapped call), whose calls not yet met are said once."""
        if self.done or self.thread is None:
            return
        self.thread = None
        patches.pop_mode(self.mode)
        for h in self.hooks:
            h.remove()
        self.hooks = []
        if self in patches.active():
            patches.active().remove(self)
        patches.release()
        if failed or self.abandoned:
            self.failed = True  # no manifest: the folder stays an incomplete dump
            if not failed:  # the block itself ended well: say why its dump did not
                raise RuntimeError(f"parity_torch: {self.folder.path}: dump abandoned: {self.abandoned}; "
                                   "no manifest written, the folder stays an incomplete dump")
            return
        if self.call < 0:
            print(f"parity_torch: {self.folder.path}: the model given to dump() ran no forward call inside the block, "
                  "so nothing is recorded yet (is the model called another object?)", file=sys.stderr)
        if self.call >= max(self.selected) if finish is None else finish:
            self.finish()
        elif block and self.call >= 0 and not self.told_pending:
            # calls=2 and one call: nothing written yet. Said once (a loop enters once per batch).
            self.told_pending = True
            print(f"parity_torch: {self.folder.path}: {self.pending()}; the manifest is written when a block "
                  "ends after it, or by close() with the calls recorded so far", file=sys.stderr)

    def pending(self):
        """What the selection still waits for, in words."""
        missing = sorted(c for c in self.selected if c > self.call)
        ran = f"{self.call + 1} forward call{'s' if self.call else ''} of the model ran"
        return f"{ran}, calls selects {'call' if len(missing) == 1 else 'calls'} {', '.join(map(str, missing))} too"

    def patched(self, inner):
        """`inner` (a patched entry point, or the next recorder's wrapper of it) through this
        recorder: the call goes through on_function once; inside it the mode sees the original
        call while busy and lets it pass."""
        def call(*args, **kwargs):
            if self.busy or not self.recording():
                return inner(*args, **kwargs)
            return self.on_function(inner, args, kwargs)
        functools.update_wrapper(call, inner)
        return call

    # -- what is being recorded ------------------------------------------------------------------
    @property
    def abandoned(self):
        """Why the dump can no longer complete (a call on another thread, a failed write), or None."""
        return self.thread_error or self.folder.abandoned

    def recording(self):
        return not self.busy and not self.abandoned and max(self.call, 0) in self.selected

    def other_thread(self):
        """Whether a hook runs where it must not record: on a thread other than the one whose block
        is open (its calls would interleave with the block's into a scrambled dump), or after the
        dump was abandoned. The first such call abandons the dump and raises on its thread."""
        if self.abandoned:
            return True
        if threading.get_ident() == self.thread:
            return False
        self.thread_error = (f"the model ran on thread {threading.current_thread().name!r} while the block "
                             f"recording it is open on thread {self.thread_name!r} (a dump records one thread)")
        raise RuntimeError(f"parity_torch: {self.folder.path}: {self.thread_error}; "
                           "dump abandoned, no manifest will be written")

    def skip(self, func, name):
        """A call whose tensors cannot go into a dump (sparse, complex): the model's own result
        stands, the call is not a layer, and it is named at the end and in the manifest."""
        frame = self.frame()
        short = name.strip("_") or "call"
        key = (ops.torch_name(func), f"{frame.path}.{short}" if frame.path else short)
        self.skipped[key] = self.skipped.get(key, 0) + 1

    def skipped_text(self):
        calls = ", ".join(f"{op}{f' x{n}' if n > 1 else ''} (layer {layer})" for (op, layer), n in self.skipped.items())
        return f"skipped {sum(self.skipped.values())} calls with sparse/complex tensors: {calls}"

    def frame(self):
        return self.stack[-1] if self.stack else self.root

    def new_layer(self, op, line, frame, short):
        layer = _Layer(len(self.layers), op, line, frame, short)
        if frame.layer is None:  # a function call: named within its module call
            layer.occurrence = frame.counts.get(short, 0)
            frame.counts[short] = layer.occurrence + 1
            frame.named.append(layer)
        self.layers.append(layer)
        return layer

    # -- module hooks ----------------------------------------------------------------------------
    def drop_raised(self, frame):
        """A recorded leaf whose forward raised, the exception caught above it: its post hook never
        ran. Its layer has no output and is dropped, and the busy count it held is given back, so
        recording goes on (the calls between the catch and the next module call or return are the
        only ones lost)."""
        if frame.layer is not None:
            frame.layer.name = None
            frame.layer = None
            self.busy -= 1

    def pre_hook(self, module, args):
        if self.other_thread():
            return
        # A leaf calls no module: a recorded leaf still on the stack raised.
        while self.stack and self.stack[-1].layer is not None:
            self.drop_raised(self.stack.pop())
        if module is self.model and all(f.module is not module for f in self.stack):  # not a recursive call
            self.call += 1
            self.autocast |= _autocast_now()
            self.name_function_layers(self.root)  # the previous call's post-processing
            self.root = _Frame("")
            self.path_calls = {}
        path = self.path_of(module)
        # A module called again in one forward (SPPF's pool, three times) is `<path>:1`, `<path>:2`,
        # as parity names the later calls of one module.
        again = self.path_calls.get(path, 0)
        self.path_calls[path] = again + 1
        path = path if again == 0 else f"{path}:{again}"
        known = None
        if not self.busy and self.recording() and module in self.leaves:
            self.busy += 1
            try:
                ops.set_written_float(self.cast)
                known = ops.known_module(module, args)
                if known is not None:
                    frame = _Frame(path, module=module)
                    frame.layer = self.new_layer(known.op, known.line, frame, known.op)
                    frame.layer.name = path
                    if self.record_inputs:
                        frame.layer.inputs = [self.input_entry(frame.layer, role, t) for role, t in known.inputs]
                    frame.layer.started = time.perf_counter()
                    # An in-place leaf (SiLU(inplace=True)) writes into its input: said as a recorded
                    # in-place call would, when its post hook sees the version move.
                    frame.inputs = [(t, _version(t)) for t in args if torch.is_tensor(t)]
            finally:
                self.busy -= 1
        if known is None:
            self.stack.append(_Frame(path, module=module))  # its functions are recorded, named within it
            return
        self.stack.append(frame)
        self.busy += 1  # nothing inside a recorded leaf is a layer of its own

    def post_hook(self, module, args, output):
        if self.other_thread() or not self.stack:
            return None
        frame = self.stack.pop()
        while frame.module is not module and self.stack:
            self.drop_raised(frame)  # a child that raised and was caught: its hooks never closed
            frame = self.stack.pop()
        if frame.layer is not None:
            layer = frame.layer
            layer.time_ms = (time.perf_counter() - layer.started) * 1e3
            for t, version in frame.inputs:
                if version is not None and _version(t) != version:
                    ptr = storage_ptr(t)
                    self.writes[ptr] = self.writes.get(ptr, 0) + 1
            try:
                self.record_outputs(layer, _tensors_in(output))  # busy still counts this leaf
            finally:
                self.busy -= 1
        self.name_function_layers(frame, _tensors_in(output))
        return None

    def path_of(self, module):
        """The module's path in this call: under the calling module's attribute that holds it. A
        module held by many parents (YOLOv5's one SiLU for every Conv, which named_modules lists
        once, as model.0.act) is then named where it runs: model.2.cv1.act."""
        parent = self.stack[-1] if self.stack else None
        if parent is not None and parent.module is not None:
            for name, child in parent.module._modules.items():
                if child is module:
                    return f"{parent.path}.{name}" if parent.path else name
        return self.paths[module]

    def name_function_layers(self, frame, returned=()):
        """`<module>.<op>` (`.1`, `.2` for later ones in the call), except the layer whose output the
        module returns: it is the module's own output and takes the module's path, as parity names
        YOLOv5's Concat (model.12), a Bottleneck's add (model.2.m.0) and Detect's cat (model.24),
        while a C3's inner cat stays model.2.cat."""
        own = None
        if frame.path and frame.module is not None:
            for t in returned:
                p = self.provenance(t)
                if p is not None and any(p.layer is l for l in frame.named):
                    own = p.layer
                    break
        for layer in frame.named:
            if layer is own:
                layer.name = frame.path
                continue
            base = f"{frame.path}.{layer.short}" if frame.path else layer.short
            layer.name = base if layer.occurrence == 0 else f"{base}.{layer.occurrence}"

    # -- function mode ---------------------------------------------------------------------------
    def on_function(self, func, args, kwargs):
        name = getattr(func, "__name__", "")
        if not self.recording():
            return func(*args, **kwargs)
        if name in ("__get__", "__iter__"):
            return self.attribute_or_rows(func, name, args, kwargs)
        if name in ops.NOT_LAYERS:
            if name in ops.PYTHON_READS:
                self.read_as_python(args)
            return func(*args, **kwargs)
        if name in ops.COMPOSITES and isinstance(func, types.FunctionType) and ops.known_function(name, args, kwargs) is None:
            with self.mode:  # the mode is off while it handles a call: on again for the calls inside
                return _opened(func)(*args, **kwargs)
        ops.set_written_float(self.cast)
        tensors, others = _arguments(args, kwargs)
        in_place = _in_place(func, name, args, kwargs)
        target = args[0] if in_place and args and torch.is_tensor(args[0]) else None
        before = buffers = None
        self.busy += 1
        try:
            sparse = _sparse(t for _, t in tensors)
            if not sparse:
                if target is not None:
                    before = (target.detach().clone(), _version(target))  # the input as it was, before the call changes it
                # Buffers a call may update as it reads them (batch_norm's running statistics in training,
                # written by its kernel with no version change): recorded as the call read them.
                buffers = {id(t): t.detach().clone() for _, t in tensors if id(t) in self.buffer_ids and t is not target}
        finally:
            self.busy -= 1
        if sparse:
            return self.unrecorded(func, name, args, kwargs)  # no storage to dump or follow
        started = time.perf_counter()
        self.busy += 1
        try:
            result = func(*args, **kwargs)
        finally:
            self.busy -= 1
        elapsed = (time.perf_counter() - started) * 1e3
        outputs = [target] if target is not None else _tensors_in(result)
        self.busy += 1
        try:
            if not outputs or not all(storable(t) or t.is_complex() for t in outputs):
                return result  # quantized: not a layer
            if _sparse(outputs):
                self.skip(func, name)
                return result
            # A factory (zeros, arange, rand) is a layer without inputs, so that what it makes has a
            # producer: an input without one is data the run was given, compared bit for bit.
            if target is None and tensors and self.pass_through(name, tensors, outputs, call_text(name, args, kwargs)):
                return result
            if any(t.is_complex() for t in outputs) or (self.record_inputs and any(t.is_complex() for _, t in tensors)):
                self.skip(func, name)  # no dtype of parity's holds it: named, not written
                return result
            self.record_function(func, name, args, kwargs, tensors, others, outputs, target, before, elapsed, buffers)
        finally:
            self.busy -= 1
        return result

    def unrecorded(self, func, name, args, kwargs):
        """Runs a call the dump cannot hold, as the model would without the recorder, and names it."""
        self.busy += 1
        try:
            result = func(*args, **kwargs)
        finally:
            self.busy -= 1
        self.skip(func, name)
        return result

    def read_as_python(self, args):
        """A layer output read as Python numbers (float(t), t.item()): marked, so that compare knows a
        layer one run alone has, whose values went nowhere else, fed only such numbers."""
        for t in args:
            p = self.provenance(t) if torch.is_tensor(t) else None
            if p is not None:
                for out in p.layer.outputs:
                    if out["role"] == p.role:
                        out["to_python"] = True

    def attribute_or_rows(self, func, name, args, kwargs):
        """x.T, x.mT, x.data (a tensor attribute) and `for row in x` / `i, j = x.T` (rows): views
        of x that keep its producer."""
        self.busy += 1
        try:
            result = func(*args, **kwargs)
            items = list(result) if name == "__iter__" else [result]
            outputs = [t for t in items if torch.is_tensor(t)]
            tensors, _ = _arguments(args, kwargs)
            if outputs and tensors and not _sparse(outputs + [t for _, t in tensors]):  # a sparse view: no storage
                self.pass_through(name, tensors, outputs, call_text(name, args, kwargs))
        finally:
            self.busy -= 1
        return iter(items) if name == "__iter__" else result

    def pass_through(self, name, tensors, outputs, text):
        """Views and copies are not layers: their results keep their producer (derived when reshaped),
        with the chain from it (`text`: the call, for messages)."""
        def written_cast(t, o):  # a float cast that the dump's written dtype makes a copy
            return (name in ops.FLOAT_CASTS and t.is_floating_point() and o.is_floating_point() and t.dtype != o.dtype
                    and layer_dtype(t, self.cast) == layer_dtype(o, self.cast))
        for o in outputs:
            same_storage = [t for _, t in tensors if o.numel() and storage_ptr(t) == storage_ptr(o)]
            copy = [t for _, t in tensors if t.shape == o.shape and
                    ((name in ops.SAME_VALUES and t.dtype == o.dtype) or written_cast(t, o))]
            if not same_storage and not copy:
                return False
        for o in outputs:
            src = next((t for _, t in tensors if o is t), None)
            if src is not None:
                continue  # the call returned its input itself
            base = next((t for _, t in tensors if o.numel() and storage_ptr(t) == storage_ptr(o)), None)
            copied = base is None
            base = base if base is not None else next(t for _, t in tensors if t.shape == o.shape)
            p = self.current(self.provenance(base))
            if p is None:
                continue
            # A cast's values may be rounded: the consumer records its own input, unless the cast
            # keeps every value (bfloat16 to float32) or the dump writes the producer so already.
            same_place = o.shape == base.shape and o.stride() == base.stride() and o.storage_offset() == base.storage_offset()
            as_is = (copied or same_place) and self.keeps_values(base, o)
            via = None
            if p.via is not None:
                via = p.via.copy(o, text, self.writes) if copied else p.via.view(o, text, self.writes)
            self.remember(o, _Prov(p.layer, p.role, p.file if as_is and not p.derived else None, _version(o),
                                   p.derived or not as_is, via))
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

    def record_function(self, func, name, args, kwargs, tensors, others, outputs, target, before, elapsed, updated=None):
        known_name = name[3:-2] if name.startswith("__i") else name.rstrip("_") if target is not None else name
        known = ops.known_function(known_name, args, kwargs) if name != "__setitem__" else None
        if known is not None:
            op, line, inputs, short = known.op, known.line, known.inputs, known.op
        else:
            op = ops.torch_name(func)
            line = ops.values_only_line(op, tensors, others)
            inputs, short = tensors, name.strip("_") or "call"
        layer = self.new_layer(op, line, self.frame(), short)
        layer.time_ms = elapsed
        if self.record_inputs:
            for role, t in inputs:
                if target is not None and t is target:
                    layer.inputs.append(self.input_entry(layer, role, before[0], like=target, version=before[1]))
                elif updated and id(t) in updated:
                    layer.inputs.append(self.input_entry(layer, role, updated[id(t)], like=t, fresh=True))
                else:
                    layer.inputs.append(self.input_entry(layer, role, t))
        if target is not None:  # views of it made before now no longer show what the chain gives
            ptr = storage_ptr(target)
            self.writes[ptr] = self.writes.get(ptr, 0) + 1
        self.record_outputs(layer, outputs)
        if target is not None:
            self.last_writer[storage_ptr(target)] = self.provenance(target)

    # -- tensors ---------------------------------------------------------------------------------
    def provenance(self, t):
        entry = self.prov.get(id(t))
        if entry is None or entry[0]() is not t:
            return None
        return entry[1]

    def current(self, p):
        """p, or, when a recorded in-place call has written since into the storage p's chain reads
        or the tensor's own (y[:, :2].mul_(2) after y was made), the latest such call's output: what
        the values came from last, the dataflow a defect there propagates through. Such a tensor has
        no chain to replay."""
        if p is None:
            return p
        writers = []
        if p.via is not None and not p.via.valid(self.writes):
            writers.append(self.last_writer.get(p.via.ptr))
        if p.ptr is not None and self.writes.get(p.ptr, 0) != p.writes:
            writers.append(self.last_writer.get(p.ptr))
        writers = [w for w in writers if w is not None and w.layer is not p.layer]
        if not writers:
            return p
        writer = max(writers, key=lambda w: w.layer.index)
        return _Prov(writer.layer, writer.role, None, p.version, True, None)

    def remember(self, t, p):
        p.ptr = storage_ptr(t)
        p.writes = self.writes.get(p.ptr, 0)
        key = id(t)
        self.prov[key] = (weakref.ref(t, lambda _, key=key: self.prov.pop(key, None)), p)

    def file_for(self, layer, role):
        return f"{layer.index:05d}.{layer.short}.{role}.npy"

    def input_entry(self, layer, role, t, like=None, version=None, fresh=False):
        """An input: its producer's file when it is that output as it was, else a file of its own
        (`fresh`: t's values as the call read them, never a buffer's file from before)."""
        like = t if like is None else like
        self.devices.add(str(t.device))
        p = self.current(self.provenance(like))
        entry = {"role": role, "source": p, "derived": False}
        if p is not None:
            current = _version(like) if version is None else version
            # Inference tensors keep no version: a recorded in-place call into the storage says it
            # changed since (views.Via.valid), with or without one.
            unwritten = p.via is None or p.via.valid(self.writes)
            if not p.derived and p.file is not None and (current is None or current == p.version) and unwritten:
                entry.update(file=p.file, dtype=layer_dtype(t, self.cast), shape=list(t.shape))
                return entry
            entry["derived"] = True
            # A version that moved with no recorded in-place call into the storage (a kernel that
            # wrote where it should not have) keeps the chain: the chain says what the values
            # should be, and compare names the side whose input is not that.
            if p.via is not None and p.via.valid(self.writes):
                entry["via"] = p.via.steps
        elif self.is_parameter(like) and not fresh:
            cached = self.param_files.get(id(like))
            if cached and cached[0]() is like and cached[1] == (_version(like) if version is None else version):
                entry.update(cached[2])
                return entry
        file = self.file_for(layer, role)
        entry.update(file=file, **self.folder.write(file, to_numpy(t, self.cast)))
        if p is None and self.is_parameter(like) and version is None and not fresh:  # the buffer as it is now, not as it was
            self.param_files[id(like)] = (weakref.ref(like), _version(like), {k: entry[k] for k in ("file", "dtype", "shape")})
        return entry

    def is_parameter(self, t):
        """A parameter or buffer of the model: written once, shared by every layer that reads it."""
        return isinstance(t, torch.nn.Parameter) or id(t) in self.buffer_ids

    def record_outputs(self, layer, outputs):
        for k, o in enumerate(outputs):
            role = f"out{k}"
            file = self.file_for(layer, role)
            self.devices.add(str(o.device))
            layer.outputs.append({"role": role, "file": file, **self.folder.write(file, to_numpy(o, self.cast))})
            self.remember(o, _Prov(layer, role, file, _version(o), False, Via.of_output(o, self.writes)))

    # -- the manifest ----------------------------------------------------------------------------
    def finish(self):
        if self.abandoned:
            raise RuntimeError(f"parity_torch: {self.folder.path}: dump abandoned: {self.abandoned}; no manifest written")
        self.name_function_layers(self.root)
        kept = [l for l in self.layers if l.name is not None and (self.filter is None or self.filter.search(l.name))]
        if not kept:
            raise RuntimeError(f"parity_torch: {self.folder.path}: no layer was recorded" +
                               (" (the layers filter matched none)" if self.filter else ""))
        self.drop_unused_files(kept)
        # The calls that ran (close() may come before every selected one has): what the dump holds.
        ran = sorted(c for c in self.selected if c <= self.call) or [0]
        manifest = {
            "format": "parity-dump", "version": 1, "model": self.name, "backend": "pytorch",
            "device": self.device_text(), "tool_version": f"parity_torch {VERSION}",
            "run": {"model": self.name, "framework": "pytorch", "torch": torch.__version__,
                    "calls": ",".join(str(c) for c in ran), "param_dtypes": self.param_dtypes(),
                    "precision": self.precision(), "autocast": ",".join(sorted(self.autocast)) or "off",
                    "tf32": "cudnn={} matmul={}".format(*self.tf32)},
            "layers": [self.layer_json(i, l) for i, l in enumerate(kept)],
        }
        if self.skipped:  # a free-text run key: compare prints it where the two dumps differ
            manifest["run"]["skipped"] = self.skipped_text()
        try:
            size = self.folder.finish(manifest)
        except OSError:
            self.failed = True
            raise
        self.done = True
        if self.skipped:
            print(f"parity_torch: {self.folder.path}: {self.skipped_text()}", file=sys.stderr)
        if len(ran) < len(self.selected):
            print(f"parity_torch: {self.folder.path}: {self.pending()}; the dump holds calls {manifest['run']['calls']}",
                  file=sys.stderr)
        print(f"parity_torch: wrote {len(kept)} layers ({size / 1e6:.1f} MB) to {self.folder.path}", file=sys.stderr)

    def drop_unused_files(self, kept):
        used = {t["file"] for l in kept for t in l.inputs + l.outputs}
        for l in self.layers:
            for t in l.inputs + l.outputs:
                if t["file"] not in used:
                    self.folder.remove(t["file"])

    def layer_json(self, i, l):
        def tensor(t):
            out = {"role": t["role"], "file": t["file"], "dtype": t["dtype"], "shape": t["shape"]}
            p = t.get("source")
            out["source"] = f"{p.layer.name}:{p.role}" if p is not None and p.layer.name else None
            if t.get("to_python"):
                out["to_python"] = True
            if t.get("derived"):
                out["derived"] = True
                if t.get("via") is not None:
                    out["via"] = t["via"]
            return out
        return {"index": i, "name": l.name, "op": l.op, "params": l.line, "time_ms": round(l.time_ms, 4),
                "inputs": [tensor(t) for t in l.inputs], "outputs": [tensor(t) for t in l.outputs]}

    def device_text(self):
        names = []
        for d in sorted(self.devices):
            if d.startswith("cuda"):
                names.append(f"{d} ({torch.cuda.get_device_name(torch.device(d))})")
            else:
                names.append(d)
        return ", ".join(names) or "cpu"

    def precision(self):
        """What the run computed in, for `parity compare --precision auto`: fp16 or bf16 where the
        weights are, or autocast on a device the run used casts to, that dtype; else tf32 where a
        CUDA device that has TF32 (compute capability 8 and up) ran with it allowed (PyTorch allows
        it in cuDNN convolutions by default); else fp32."""
        dtypes = {p.dtype for p in self.model.parameters()}
        used = {d.split(":")[0] for d in self.devices}
        autocast = {a.split(":")[1] for a in self.autocast if a.split(":")[0] in used}
        if torch.float16 in dtypes or "float16" in autocast:
            return "fp16"
        if torch.bfloat16 in dtypes or "bfloat16" in autocast:
            return "bf16"
        cuda = [d for d in self.devices if d.startswith("cuda")]
        if cuda and any(self.tf32) and any(torch.cuda.get_device_capability(torch.device(d))[0] >= 8 for d in cuda):
            return "tf32"
        return "fp32"

    def param_dtypes(self):
        return ",".join(sorted({str(p.dtype).replace("torch.", "") for p in self.model.parameters()})) or "none"


def _opened(func):
    """A Python function of torch.nn.functional that runs its own body instead of handing itself to
    the torch function mode again (which would call it once more, whole): its checks for an override
    answer no, so the calls it makes are what the mode sees."""
    names = dict(func.__globals__)
    names.update(has_torch_function=lambda *a: False, has_torch_function_unary=lambda *a: False,
                 has_torch_function_variadic=lambda *a: False)
    body = types.FunctionType(func.__code__, names, func.__name__, func.__defaults__, func.__closure__)
    body.__kwdefaults__ = func.__kwdefaults__
    return body


def _autocast_now():
    """The autocast regions in force now, as "cuda:float16" or "cpu:bfloat16"."""
    found = set()
    for device in ("cuda", "cpu"):
        try:
            on, dtype = torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)
        except (TypeError, AttributeError):  # torch before 2.4 asks each device its own way
            if device == "cuda":
                on, dtype = torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()
            else:
                on, dtype = torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
        if on:
            found.add(f"{device}:{str(dtype).replace('torch.', '')}")
    return found


def layer_dtype(t, cast=None):
    dtype = cast if cast is not None and t.is_floating_point() else t.dtype
    return DTYPE_NAMES.get(dtype, "float32" if dtype == torch.bfloat16 else "int32")
