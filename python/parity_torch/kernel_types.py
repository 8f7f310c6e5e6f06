"""Which floating type the ATen kernels inside one call computed in, seen under autocast. A call whose
tensors are all float32 may run its products in the half type inside (a GRU cell's linear layers,
which autocast casts) or compute in float32 throughout (an add, a GELU between autocast's layers).
The recording says which (a layer's `kernels_in`), so that the judge holds the second to float32's
bound: judged at the half type's, a float32 GELU kernel 0.4% off passed. Only calls one kernel
computes are watched (watcher): the mode must never change what the model computes."""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from . import torch_calls

_HALF = (torch.float16, torch.bfloat16)


# ATen kernels a CUDA device with TF32 may run in it on float32 tensors, and the switch that allows it.
_CUDNN = ("conv", "cudnn_conv", "_convolution")
_MATMUL = ("mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "mv", "matmul", "linear", "dot")


def _tf32_allowed(name, tensors):
    """Whether kernel `name` on `tensors` may have computed in TF32: float32 CUDA tensors on a device
    of compute capability 8 or more, with PyTorch's switch for that kind of kernel on."""
    cuda = [t for t in tensors if t.is_cuda and t.dtype == torch.float32]
    if not cuda or torch.cuda.get_device_capability(cuda[0].device)[0] < 8:
        return False
    if name.startswith(_CUDNN):
        return torch.backends.cudnn.allow_tf32
    return name in _MATMUL and torch.backends.cuda.matmul.allow_tf32


class KernelTypes(TorchDispatchMode):
    """Sees every ATen call below autocast (the Python dispatch key is under it, so the casts it made
    are seen): `half` is the first half type any of their tensors had, or None; `tf32` whether a
    convolution or product on float32 CUDA tensors may have run in TF32."""

    def __init__(self):
        super().__init__()
        self.half, self.tf32 = None, False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if self.half is None:
            tensors = [t for t in tree_flatten((args, kwargs, result))[0] if torch.is_tensor(t)]
            self.half = next((t.dtype for t in tensors if t.dtype in _HALF), None)
            if not self.tf32:
                self.tf32 = _tf32_allowed(func.overloadpacket.__name__, tensors)
        return result


def watcher(name, in_place, tensors, regions):
    """A KernelTypes to run call `name` in, where its record can say something and the watching
    cannot change what it computes: autocast is on (`regions`, manifest.autocast_now's), every float
    tensor the call takes is float32, and one kernel computes it (torch_calls.SINGLE_KERNELS: under a
    dispatch mode, the operators a kernel calls inside run without autocast, and bilinear, pinv or
    affine_grid would compute in float32 where the model's run computes in bfloat16). None
    otherwise: not watched, recorded as before."""
    if not _single_kernel(name, in_place) or not _all_float32(t for _, t in tensors) or not regions:
        return None
    return KernelTypes()


def _single_kernel(name, in_place):
    function = torch_calls.function_name(name, in_place)
    if function.startswith("__") and function.endswith("__"):  # an operator: x * y is mul
        function = function[2:-2]
    return function in torch_calls.SINGLE_KERNELS


def _all_float32(tensors):
    return all(t.dtype == torch.float32 for t in tensors if t.is_floating_point())


def kernels_in(watch, name, in_place, tensors, outputs, regions):
    """The layer's `kernels_in`: "float32" when the call's float outputs are float32 and no kernel
    inside met a half tensor or may have run in TF32; the half type's name when one met it, "tf32"
    for TF32. Unwatched (`watch` None), outside_autocast's with the autocast `regions` in force as
    it ran; None otherwise."""
    floats = [t for t in outputs if t.is_floating_point()]
    if not floats or any(t.dtype != torch.float32 for t in floats):
        return None
    if watch is None:
        return outside_autocast(_single_kernel(name, in_place), [t for _, t in tensors], regions)
    if watch.half is not None:
        return str(watch.half).replace("torch.", "")
    return "tf32" if watch.tf32 else "float32"


def outside_autocast(single, inputs, regions):
    """The `kernels_in` of a call made with no autocast `regions` in force on float32 `inputs` (its float
    outputs float32): an autocast region entered inside forward leaves the calls around it in float32,
    and the run's autocast must not judge them as cast (manifest.py writes it only for a run that saw
    autocast). "tf32" where a kernel inside may have run in TF32 (float32 CUDA tensors on compute
    capability 8 or more, a switch on, more than one kernel or a product), else "float32"; None
    under autocast."""
    if regions or not _all_float32(inputs):
        return None
    cuda = [t for t in inputs if t.is_cuda]
    if cuda and not single and torch.cuda.get_device_capability(cuda[0].device)[0] >= 8 and (
            torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32):
        return "tf32"
    return "float32"


def leaf_kernels_in(op, inputs, outputs, regions):
    """A recorded leaf module's `kernels_in` (module_hooks.py), its float outputs float32: "float32"
    for one parity op that one kernel computes (SiLU, Sigmoid: element-wise, left alone by autocast,
    so computed in its input's type) on float32 tensors; outside autocast, outside_autocast's (a
    Conv2d module's); None otherwise. Judged at the half type's bound under autocast, a float32 SiLU
    module 0.4% off passed."""
    floats = [t for t in outputs if t.is_floating_point()]
    if not floats or not _all_float32(floats) or not _all_float32(inputs):
        return None
    return "float32" if op in torch_calls.SINGLE_KERNELS else outside_autocast(False, inputs, regions)
