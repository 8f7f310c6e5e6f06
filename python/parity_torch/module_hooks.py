"""The forward hooks on every module of the model: they keep the stack of module calls the layers are
named by (naming.py), count the model's forward calls, and record a leaf module parity has an op for
(Conv2d, SiLU, Sigmoid, MaxPool2d, nearest Upsample) as one layer, with its parameters as inputs:
nothing inside it is recorded."""
import time

import torch

from . import kernel_types, ops
from .calls import returned_tensors, tensors_in
from .manifest import autocast_met, autocast_now
from .naming import Frame
from .provenance import version_of
from .writer import storable


class ModuleHooks:
    """The hooks of `recorder` (recorder.Recorder), installed while a block is open."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.handles = []

    def install(self):
        for m in self.recorder.names.paths:
            if isinstance(m, torch.jit.ScriptModule):
                continue  # takes no hooks: a scripted submodule runs as one call, its own calls unseen
            self.handles.append(m.register_forward_pre_hook(self.pre_hook))
            self.handles.append(m.register_forward_hook(self.post_hook))

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def drop_raised(self, frame):
        """A recorded leaf whose forward raised, the exception caught above it: its post hook never
        ran. Its layer has no output and is dropped, and the busy count it held is given back, so
        recording goes on (the calls between the catch and the next module call or return are the
        only ones lost)."""
        if frame.layer is not None:
            frame.layer.name = None
            frame.layer = None
            self.recorder.busy -= 1

    def pre_hook(self, module, args):
        r = self.recorder
        names = r.names
        if r.other_thread():
            return
        # A leaf calls no module: a recorded leaf still on the stack raised.
        while names.stack and names.stack[-1].layer is not None:
            self.drop_raised(names.stack.pop())
        if module is r.model and all(f.module is not module for f in names.stack):  # not a recursive call
            r.forward_begins()
        path = names.call_path(module)
        known = None
        if not r.busy and r.recording() and module in names.leaves:
            r.busy += 1
            try:
                ops.set_written_float(r.cast)
                r.autocast |= autocast_met((t for t in args if torch.is_tensor(t)), autocast_now())  # also a region entered inside forward
                known = ops.known_module(module, args)
                if known is not None:
                    frame = Frame(path, module=module)
                    frame.layer = names.new_layer(known.op, known.line, frame, known.op)
                    frame.layer.name = path
                    if r.record_inputs:
                        frame.layer.inputs = [r.files.input_entry(frame.layer, role, t) for role, t in known.inputs]
                    frame.layer.started = time.perf_counter()
                    # An in-place leaf (SiLU(inplace=True)) writes into its input: said as a recorded
                    # in-place call would, when its post hook sees the version move.
                    frame.inputs = [(t, version_of(t)) for t in args if torch.is_tensor(t)]
            finally:
                r.busy -= 1
        if known is None:
            names.stack.append(Frame(path, module=module))  # its functions are recorded, named within it
            return
        names.stack.append(frame)
        r.busy += 1  # nothing inside a recorded leaf is a layer of its own

    def post_hook(self, module, args, output):
        r = self.recorder
        names = r.names
        if r.other_thread() or not names.stack:
            return None
        frame = names.stack.pop()
        while frame.module is not module and names.stack:
            self.drop_raised(frame)  # a child that raised and was caught: its hooks never closed
            frame = names.stack.pop()
        if frame.layer is not None:
            layer = frame.layer
            layer.time_ms = (time.perf_counter() - layer.started) * 1e3
            for t, version in frame.inputs:
                if version is not None and version_of(t) != version:
                    r.sources.wrote_into(t)
            try:
                r.files.record_outputs(layer, tensors_in(output))  # busy still counts this leaf
                layer.kernels_in = kernel_types.leaf_kernels_in(layer.op, [t for t, _ in frame.inputs], tensors_in(output), autocast_now())
            finally:
                r.busy -= 1
        if module is r.model and all(f.module is not module for f in names.stack) and r.recording() and r.record_inputs:
            self.record_returned(frame, output)
        names.name_function_layers(frame, tensors_in(output))
        return None

    def record_returned(self, frame, output):
        """What the model returns that a layer made: a layer `output` that passes it on, whose input
        is checked against its producer through the views and copies between them (llama's
        logits.float(), a permute and contiguous), which nothing else reads. Recorded for a layer's
        output as it is too, so that a run where .float() copies and one where it does not (a
        float32 run) have the same layers."""
        r = self.recorder
        seen = set()
        for t in returned_tensors(output):
            if id(t) in seen or r.sources.source(t) is None or not storable(t) or t.is_sparse:
                continue
            seen.add(id(t))
            r.busy += 1
            try:
                layer = r.names.new_layer("torch.Tensor.clone", f"torch.Tensor.clone in0={ops.shape_text(t)}", frame, "output")
                entry = r.files.input_entry(layer, "in0", t)
                layer.inputs.append(entry)
                r.files.record_output_as(layer, t, entry)  # the same file: no byte written twice
            finally:
                r.busy -= 1
