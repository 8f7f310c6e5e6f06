"""The process-wide patches, and which dumps are open on which thread.

torch 1.13's TorchFunctionMode does not see indexing with a single key (`x[mask]`, `x[i]`) nor
torchvision's nms (a torch.ops call), so Tensor.__getitem__/__setitem__ and torchvision.ops.nms are
wrapped; so is torchvision.ops.batched_nms, recorded as one call. Those are shared by every thread,
while dump blocks open and close per thread and in any order: the wrappers go in when the first
block opens and come out when the last one closes (a count under a lock), and each wrapped call
goes to the recorders open on its own thread, the one opened last first, or straight to the
original when there are none. Nothing a block leaves behind can record into a finished dump.
"""
import functools
import sys
import threading

import torch

_lock = threading.Lock()
_open = 0         # dump blocks open in the process
_installed = {}   # (owner, attribute) -> (original, whether owner itself held it, wrapper)
_local = threading.local()


def active():
    """The recorders whose blocks are open on this thread, the first opened first."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _targets():
    found = [(torch.Tensor, "__getitem__"), (torch.Tensor, "__setitem__")]
    for module in ("torchvision.ops", "torchvision.ops.boxes"):  # only if the model imported it
        owner = sys.modules.get(module)
        # batched_nms takes one of two paths by box count and device (per class above 4000
        # coordinates on the CPU and 20000 on CUDA, one nms of boxes shifted by class below): one
        # call, or a CPU run and a CUDA run would differ in structure.
        if owner is not None:
            found += [(owner, name) for name in ("nms", "batched_nms") if getattr(owner, name, None) is not None]
    return found


def _wrapper(original):
    def call(*args, **kwargs):
        stack = getattr(_local, "stack", None)
        if not stack:
            return original(*args, **kwargs)
        fn = original
        for recorder in stack:
            if recorder.recording():  # else the call is not its to see (it is busy inside its own code)
                fn = recorder.patched(fn)
        return fn(*args, **kwargs)
    functools.update_wrapper(call, original)
    return call


def install():
    """A block opens: the wrappers go in if they are not in yet (nms once torchvision is imported)."""
    global _open
    with _lock:
        _open += 1
        for owner, attr in _targets():
            if (owner, attr) not in _installed:
                original = getattr(owner, attr)
                wrapper = _wrapper(original)
                # Tensor.__getitem__ is inherited from TensorBase: restored by deleting Tensor's own.
                _installed[(owner, attr)] = (original, attr in vars(owner), wrapper)
                setattr(owner, attr, wrapper)


def release():
    """A block closes: the last one out puts every original back (not over someone else's wrapper
    installed since: ours then stays beneath it and passes calls through)."""
    global _open
    with _lock:
        _open -= 1
        if _open:
            return
        for (owner, attr), (original, own, wrapper) in _installed.items():
            if vars(owner).get(attr) is wrapper:
                if own:
                    setattr(owner, attr, original)
                else:
                    delattr(owner, attr)
        _installed.clear()


def pop_mode(mode):
    """Leaves `mode` on this thread's torch function mode stack, even when modes pushed after it
    are still there (blocks left out of order): those are put back."""
    try:
        from torch.overrides import _get_current_function_mode, _pop_mode, _push_mode
    except ImportError:
        mode.__exit__(None, None, None)
        return
    above = []
    while _get_current_function_mode() is not None and _get_current_function_mode() is not mode:
        above.append(_pop_mode())
    if _get_current_function_mode() is mode:
        _pop_mode()
    for m in reversed(above):
        _push_mode(m)
