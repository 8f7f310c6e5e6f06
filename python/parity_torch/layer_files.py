"""A layer's input and output entries, and the files they name: an output is written as the layer's
own file; an input that is its producer's output as is names the producer's file, a parameter or
buffer is written once and shared, and any other input is written as the layer's own file."""
import weakref

import torch

from .provenance import layer_dtype, version_of
from .views import dtype_name, real_view
from .writer import to_numpy


def file_for(layer, role):
    return f"{layer.index:05d}.{layer.short}.{role}.npy"


class LayerFiles:
    """Writes a dump's tensor files into `folder` (writer.DumpFolder), floats in `cast` where given;
    `sources`: provenance.Provenance. Keeps the devices the tensors were on."""

    def __init__(self, folder, sources, model, cast):
        self.folder, self.sources, self.cast = folder, sources, cast
        self.buffer_ids = {id(b) for b in model.buffers()}
        self.param_files = {}
        self.devices = set()
        self.narrowed = set()  # the float dtypes written in a narrower `cast` (a float64 run's, as float32)

    def is_buffer(self, t):
        return id(t) in self.buffer_ids

    def is_parameter(self, t):
        """A parameter or buffer of the model: written once, shared by every layer that reads it."""
        return isinstance(t, torch.nn.Parameter) or id(t) in self.buffer_ids

    def input_entry(self, layer, role, t, like=None, version=None, fresh=False):
        """An input: its producer's file when it is that output as it was, else a file of its own
        (`fresh`: t's values as the call read them, never a buffer's file from before)."""
        like = t if like is None else like
        self.devices.add(str(t.device))
        p = self.sources.source(like)
        entry = {"role": role, "source": p, "derived": False}
        if t.dim() > 1 and not t.is_contiguous():  # some CPU kernels take another path on it (linear)
            entry["strided"] = True
        if p is not None:
            if self.sources.as_written(p, version_of(like) if version is None else version):
                entry.update(file=p.file, dtype=layer_dtype(t, self.cast), shape=list(real_view(t).shape))
                return entry
            entry["derived"] = True
            # A version that moved with no recorded in-place call into the storage (a kernel that
            # wrote where it should not have) keeps the chain: the chain says what the values
            # should be, and compare names the side whose input is not that.
            via = self.sources.chain(p)
            if via is not None:
                entry["via"] = via
        elif self.is_parameter(like) and not fresh:
            cached = self.param_files.get(id(like))
            if cached and cached[0]() is like and cached[1] == (version_of(like) if version is None else version):
                entry.update(cached[2])
                return entry
        file = file_for(layer, role)
        entry.update(file=file, **self.folder.write(file, self.values(t)))
        if p is None and self.is_parameter(like) and version is None and not fresh:  # the buffer as it is now, not as it was
            self.param_files[id(like)] = (weakref.ref(like), version_of(like), {k: entry[k] for k in ("file", "dtype", "shape")})
        return entry

    def record_outputs(self, layer, outputs):
        for k, o in enumerate(outputs):
            role = f"out{k}"
            file = file_for(layer, role)
            self.devices.add(str(o.device))
            self.add_output(layer, role, o, {"file": file, **self.folder.write(file, self.values(o))})

    def values(self, t):
        """t's values as the dump writes them, noting a float dtype narrowed on the way: the run's
        recorded inputs are then its own rounded (the manifest's `written_from`)."""
        if self.cast is not None and t.is_floating_point() and torch.finfo(t.dtype).bits > torch.finfo(self.cast).bits:
            self.narrowed.add(dtype_name(t.dtype))
        return to_numpy(t, self.cast)

    def record_output_as(self, layer, o, written):
        """o as the output of `layer`, whose values are those of the entry `written` (a file already
        in the dump): listed, not written again."""
        self.add_output(layer, "out0", o, {k: written[k] for k in ("file", "dtype", "shape")})

    def add_output(self, layer, role, o, fields):
        """o, whose file and its dtype and shape are `fields`, as output `role` of `layer`."""
        entry = {"role": role, **fields}
        if o.dtype in (torch.float16, torch.bfloat16) and entry["dtype"] != dtype_name(o.dtype):
            entry["cast_from"] = dtype_name(o.dtype)  # what the kernel computed in, whatever the run's dtype
        layer.outputs.append(entry)
        self.sources.produced(o, layer, role, fields["file"])

    def drop_unused(self, layers, kept):
        """Removes the files no kept layer lists (those of layers the `layers` filter left out)."""
        used = {t["file"] for l in kept for t in l.inputs + l.outputs}
        for l in layers:
            for t in l.inputs + l.outputs:
                if t["file"] not in used:
                    self.folder.remove(t["file"])
