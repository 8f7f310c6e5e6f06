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

The Recorder here is the coordinator: it opens and closes blocks, keeps which forward calls are
selected and on which thread, and writes the manifest at the end. The work is done by
module_hooks.py (the hooks on every module: the module-call stack, leaf layers), intercept.py (the
torch function mode and the patched entry points: every other call), naming.py (layer names),
provenance.py (which layer produced each live tensor), layer_files.py (each layer's tensor files,
through writer.DumpFolder) and manifest.py.
"""
import re
import sys
import threading
import types

import torch

from . import patches
from .intercept import FunctionCalls
from .layer_files import LayerFiles
from .manifest import build, skipped_text
from .module_hooks import ModuleHooks
from .naming import Names
from .provenance import Provenance
from .writer import DumpFolder


def scripted_functions(model):
    """TorchScript functions (`@torch.jit.script def bias_gelu`) that the forwards of the model's
    modules name, directly or as a module's attribute: no hook or mode sees inside their calls."""
    found = []
    for cls in dict.fromkeys(type(m) for m in model.modules()):
        code = getattr(getattr(cls, "forward", None), "__code__", None)
        if code is None:
            continue
        names = cls.forward.__globals__
        for name in code.co_names:
            held = [names.get(name)] + [getattr(v, name, None) for v in names.values() if isinstance(v, types.ModuleType)
                                        and v.__name__.split(".")[0] not in ("torch", "builtins")]
            if any(isinstance(v, torch.jit.ScriptFunction) for v in held) and name not in found:
                found.append(name)
    return found


def may_take_fast_path(module, model):
    """Whether PyTorch may run `module` (in `model`) on its fused fast path, as far as the module's
    own settings tell: an eval TransformerEncoderLayer or MultiheadAttention, batch first, with
    one embedding size for query, key and value, and no extra key and value rows; a
    TransformerDecoderLayer's attention over its memory (never query, key and value at once) not.
    Whether it does depends on the call too (masks, autocast, the number of heads in some versions)."""
    attention = module.self_attn if isinstance(module, torch.nn.TransformerEncoderLayer) else module
    if module.training or not isinstance(attention, torch.nn.MultiheadAttention):
        return False
    if not attention.batch_first or not attention._qkv_same_embed_dim or attention.bias_k is not None or attention.add_zero_attn:
        return False
    return not any(isinstance(m, torch.nn.TransformerDecoderLayer) and m.multihead_attn is module for m in model.modules())


class Recorder:
    def __init__(self, out_dir, model, inputs, layers, calls, force, name, dtype):
        if not isinstance(model, torch.nn.Module):
            raise TypeError("parity_torch: dump: model must be a torch.nn.Module")
        if isinstance(model, torch.jit.ScriptModule):
            # Its graph runs in C++: no hook or torch function mode sees a call inside it.
            raise TypeError("parity_torch: dump: the model is TorchScript (torch.jit.trace or torch.jit.script), whose "
                            "calls run without Python and cannot be recorded; pass the nn.Module it was made from")
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
        self.cast = dtype
        self.sources = Provenance(dtype)
        self.names = Names(model, self.sources.producer)
        self.files = LayerFiles(self.folder, self.sources, model, dtype)
        self.hooks = ModuleHooks(self)
        self.functions = FunctionCalls(self)
        self.call = -1  # forward calls of `model` so far, minus one
        self.busy = 0   # > 0 inside parity_torch's own code and inside recorded leaf modules
        self.autocast = set()  # autocast regions a recorded call met ("cuda:float16"), for run.precision
        self.tf32 = None       # (cuDNN, matmul) TF32 switches as the block began
        self.done = self.failed = False
        self.thread_error = None  # a model call on another thread: the dump cannot complete
        self.thread = None     # the thread whose open block records, or None between blocks
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
            self.tell_fast_paths()
        self.hooks.install()
        patches.install()
        patches.active().append(self)
        self.functions.enter()

    def tell_fast_paths(self):
        """Says once which of the model's modules PyTorch may run on a fused fast path (eval
        TransformerEncoderLayer and MultiheadAttention), which it does not take while a torch
        function mode is on: the dump records their composite path instead."""
        paths = [n or type(m).__name__ for n, m in self.model.named_modules() if may_take_fast_path(m, self.model)]
        if paths:
            shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
            print(f"parity_torch: {self.folder.path}: {shown}: PyTorch's fused fast path for these is not taken while a dump "
                  "records (a torch function mode is on), so the dump holds their composite path's calls; outputs agree but "
                  "at padded positions (src_key_padding_mask), which the fast path leaves 0", file=sys.stderr)
        scripted = [n for n, m in self.model.named_modules() if n and isinstance(m, torch.jit.ScriptModule)
                    and not any(n.startswith(o + ".") for o, p in self.model.named_modules() if o and isinstance(p, torch.jit.ScriptModule))]
        scripted += [f"{f} (a function)" for f in scripted_functions(self.model)]
        if scripted:
            shown = ", ".join(scripted[:3]) + (f" and {len(scripted) - 3} more" if len(scripted) > 3 else "")
            print(f"parity_torch: {self.folder.path}: {shown}: TorchScript (torch.jit.script or trace), whose calls run without "
                  "Python: nothing inside is recorded, and what it returns reaches the next layer as data no layer produced "
                  "(against a run in another precision: \"input ... differs and no layer produced it\"); dump the nn.Module "
                  "it was made from, or set PYTORCH_JIT=0 in the environment before the model's code is imported (TorchScript "
                  "then runs as Python)", file=sys.stderr)

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
        self.functions.leave()
        self.hooks.remove()
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
        """`inner`, a patched entry point (patches.py), through this recorder (intercept.py)."""
        return self.functions.patched(inner)

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

    def forward_begins(self):
        """The model's next forward call starts (module_hooks.py): the previous one's post-processing
        is over."""
        self.call += 1
        self.names.new_forward()

    # -- the manifest ----------------------------------------------------------------------------
    def finish(self):
        if self.abandoned:
            raise RuntimeError(f"parity_torch: {self.folder.path}: dump abandoned: {self.abandoned}; no manifest written")
        self.names.name_function_layers(self.names.root)
        kept = [l for l in self.names.layers if l.name is not None and (self.filter is None or self.filter.search(l.name))]
        if not kept:
            raise RuntimeError(f"parity_torch: {self.folder.path}: no layer was recorded" +
                               (" (the layers filter matched none)" if self.filter else ""))
        self.files.drop_unused(self.names.layers, kept)
        # The calls that ran (close() may come before every selected one has): what the dump holds.
        ran = sorted(c for c in self.selected if c <= self.call) or [0]
        skipped = self.functions.skipped
        manifest = build(self.name, self.model, kept, ran, self.files.devices, self.autocast, self.tf32, skipped, self.files.narrowed)
        try:
            size = self.folder.finish(manifest)
        except OSError:
            self.failed = True
            raise
        self.done = True
        if skipped:
            print(f"parity_torch: {self.folder.path}: {skipped_text(skipped)}", file=sys.stderr)
        if len(ran) < len(self.selected):
            print(f"parity_torch: {self.folder.path}: {self.pending()}; the dump holds calls {manifest['run']['calls']}",
                  file=sys.stderr)
        print(f"parity_torch: wrote {len(kept)} layers ({size / 1e6:.1f} MB) to {self.folder.path}", file=sys.stderr)
