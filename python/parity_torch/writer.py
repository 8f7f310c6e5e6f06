"""The dump on disk, in parity's format (docs/DESIGN.md, "Files"): one .npy per tensor, and
manifest.json written last and atomically, so a folder without a manifest is an incomplete dump
that `parity compare` refuses."""
import json
import os

import numpy as np
import torch

# torch dtypes parity reads as they are; anything else is widened to one it reads (say so in `note`).
_NPY = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16, torch.int32: np.int32,
        torch.int64: np.int64, torch.uint8: np.uint8, torch.bool: np.bool_}
_WIDENED = {torch.bfloat16: torch.float32, torch.int8: torch.int32, torch.int16: torch.int32}
DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16", torch.int32: "int32",
               torch.int64: "int64", torch.uint8: "uint8", torch.bool: "bool"}


def storable(t):
    """Whether a tensor can go into a dump (complex and quantized ones cannot)."""
    return t.dtype in _NPY or t.dtype in _WIDENED


def to_numpy(t, cast=None):
    """The tensor's values on the host, C order, in a dtype parity reads (floats in `cast` if given)."""
    t = t.detach()
    if cast is not None and t.is_floating_point():
        t = t.to(cast)
    if t.dtype in _WIDENED:
        t = t.to(_WIDENED[t.dtype])
    if t.is_cuda:
        torch.cuda.synchronize(t.device)  # the values of every launched kernel, not a stale buffer
    a = t.cpu().numpy()
    return np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray makes a 0-d array 1-d: keep its shape


class DumpFolder:
    def __init__(self, path, force):
        self.path = os.fspath(path)
        self.bytes = 0
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise ValueError(f"parity_torch: {self.path} exists and is not a folder")
        os.makedirs(self.path, exist_ok=True)
        existing = [n for n in os.listdir(self.path)]
        if existing and not force:
            raise ValueError(f"parity_torch: {self.path} is not empty (pass force=True to overwrite it)")
        manifest = os.path.join(self.path, "manifest.json")
        if os.path.exists(manifest):
            os.remove(manifest)  # first, so the folder never looks complete while it is rewritten
        for n in existing:
            if n.endswith(".npy"):
                os.remove(os.path.join(self.path, n))

    def write(self, file, array):
        """Writes one tensor file; returns its entry fields (dtype, shape)."""
        with open(os.path.join(self.path, file), "wb") as f:
            np.save(f, array, allow_pickle=False)
            self.bytes += f.tell()
        return {"dtype": str(array.dtype) if array.dtype != np.bool_ else "bool", "shape": list(array.shape)}

    def finish(self, manifest):
        """Every tensor on disk, then the manifest, atomically: a killed run leaves no manifest."""
        for name in os.listdir(self.path):
            if name.endswith(".npy"):
                fd = os.open(os.path.join(self.path, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        final = os.path.join(self.path, "manifest.json")
        tmp = os.path.join(self.path, "manifest.json.tmp")
        with open(tmp, "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        dirfd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
