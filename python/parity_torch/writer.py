"""The dump on disk, in parity's format (docs/DESIGN.md, "Files"): one .npy per tensor, and
manifest.json written last and atomically, so a folder without a manifest is an incomplete dump
that `parity compare` refuses.

Nothing a folder holds can make the recorder write or remove anything else: every file is created
exclusively and never through a link (a link planted under a name the dump uses is refused, not
followed), and force=True removes only what a dump wrote (DumpFolder).
"""
import errno
import json
import os
import stat

import numpy as np
import torch

from .views import storage_ptr

# torch dtypes parity reads as they are; anything else is widened to one it reads (say so in `note`).
_NPY = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16, torch.int32: np.int32,
        torch.int64: np.int64, torch.uint8: np.uint8, torch.bool: np.bool_}
_WIDENED = {torch.bfloat16: torch.float32, torch.int8: torch.int32, torch.int16: torch.int32}
DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16", torch.int32: "int32",
               torch.int64: "int64", torch.uint8: "uint8", torch.bool: "bool"}


_COMPLEX = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def storable(t):
    """Whether a tensor can go into a dump (quantized ones and complex32 cannot; a complex one goes
    as its real view, torch.view_as_real's)."""
    return t.dtype in _NPY or t.dtype in _WIDENED or t.dtype in _COMPLEX


def to_numpy(t, cast=None):
    """The tensor's values on the host, C order, in a dtype parity reads (floats in `cast` if given;
    a complex tensor as its real view, its parts in that real type)."""
    t = own = t.detach()
    if t.is_complex():
        real = _COMPLEX[t.dtype] if cast is None else cast
        t = torch.view_as_real(t.resolve_conj().to(torch.complex64 if real == torch.float32 else torch.complex128))
    if cast is not None and t.is_floating_point():
        t = t.to(cast)
    if t.dtype in _WIDENED:
        t = t.to(_WIDENED[t.dtype])
    if t.is_cuda:
        torch.cuda.synchronize(t.device)  # the values of every launched kernel, not a stale buffer
    host = t.cpu()
    # numpy() leaves the storage it reads unresizable for good (PyTorch keeps the array's memory
    # alive so): a tensor of the model's own is copied first, or the model could not resize it after
    # (CrossMapLRN2d's output.resize_as_(input) raised inside the dump).
    if storage_ptr(host) == storage_ptr(own):
        host = host.clone()
    a = host.numpy()
    return np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray makes a 0-d array 1-d: keep its shape


MARKER = ".parity_dump"  # the files a dump in progress wrote, for a later force=True to remove
_MARKER_HEAD = "parity_torch dump in progress: the files it wrote, one a line\n"
_TMP = "manifest.json.tmp"
_DISK_FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


class DumpError(OSError):
    """Writing the dump failed (a full disk, a file in the way): the dump is abandoned. An OSError,
    with the errno of the failure where there was one; its message is parity_torch's own line."""

    def __str__(self):
        return self.strerror


def _create(path):
    """A new file, never an existing one nor a link's target (O_EXCL, O_NOFOLLOW)."""
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags, 0o644)


def _unlink(path):
    """Removes a name (a link itself, never its target); absent is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _plain(name):
    """A file name a dump may hold: no folder part, not hidden (docs/MANIFEST.md, "file")."""
    return isinstance(name, str) and name and "/" not in name and "\\" not in name and "\0" not in name \
        and not name.startswith(".")


def _read_regular(path):
    """A regular file's text, or None (absent, a link, a device, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


class DumpFolder:
    """The dump folder. It starts empty, or force=True empties it of a dump's own files:

    - a manifest.json of a parity dump: its listed files (the manifest goes first, so the folder
      never looks complete while they go; they are added to the marker before, so a run killed
      meanwhile leaves them listed for the next force=True);
    - a dump that did not finish (killed, or abandoned after an exception): `.parity_dump`, the
      marker the recorder writes before anything else and adds each file's name to before
      creating it, lists every file it wrote; the marker is removed once the manifest is written.
    Any other file stays. A folder holding files but neither a parity manifest nor a marker is not
    a dump: force=True refuses it rather than remove a user's own files.
    """

    def __init__(self, path, force):
        self.path = os.fspath(path)
        self.sizes = {}  # the files written so far, by name: their sizes
        self.abandoned = None  # why writing failed; then no manifest is ever written
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise ValueError(f"parity_torch: {self.path} exists and is not a folder")
        try:
            os.makedirs(self.path, exist_ok=True)
            existing = os.listdir(self.path)
            if existing and not force:
                raise ValueError(f"parity_torch: {self.path} is not empty (pass force=True to overwrite it)")
            if existing:
                self._clear()
            self._new_marker()
        except OSError as e:  # no permission, a full disk: said in parity_torch's words, naming the folder
            raise DumpError(e.errno, f"parity_torch: cannot prepare the dump folder {self.path}: "
                                     f"{e.strerror or e}{f' ({e.filename})' if e.filename else ''}") from e

    def _join(self, name):
        return os.path.join(self.path, name)

    def _listed(self):
        """The files manifest.json lists when it is a parity dump's; None when there is none; False
        when it is something else."""
        text = _read_regular(self._join("manifest.json"))
        if text is None:
            return None if not os.path.lexists(self._join("manifest.json")) else False
        try:
            m = json.loads(text)
            files = {t["file"] for l in m["layers"] for t in l.get("inputs", []) + l["outputs"]}
        except (ValueError, KeyError, TypeError, AttributeError):
            return False
        if not isinstance(m, dict) or m.get("format") != "parity-dump" or not all(_plain(f) for f in files):
            return False
        return files

    def _marked(self):
        """The files the marker lists, or None when there is no marker of parity_torch's."""
        text = _read_regular(self._join(MARKER))
        if text is None or not text.startswith(_MARKER_HEAD):
            return None
        return {n for n in text[len(_MARKER_HEAD):].split("\n") if _plain(n)}

    def _clear(self):
        listed, marked = self._listed(), self._marked()
        if listed is False or (listed is None and marked is None):
            raise ValueError(f"parity_torch: {self.path} holds files that are not a parity dump; not removing them "
                             f"(force=True replaces a parity dump: a folder with its manifest.json or {MARKER})")
        if marked is None:
            self._new_marker()
        if listed:
            self._mark(sorted(listed))
        _unlink(self._join("manifest.json"))
        for name in sorted((listed or set()) | (marked or set())):
            _unlink(self._join(name))
        _unlink(self._join(_TMP))

    def _new_marker(self):
        _unlink(self._join(MARKER))
        fd = _create(self._join(MARKER))
        try:
            os.write(fd, _MARKER_HEAD.encode())
        finally:
            os.close(fd)

    def _mark(self, names):
        """Adds names to the marker before the files are created: a killed run leaves them listed."""
        fd = os.open(self._join(MARKER), os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
        try:
            data = "".join(n + "\n" for n in names).encode()
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        finally:
            os.close(fd)

    def _abandon(self, name, e):
        """One error for a failed write, naming the file; the dump can no longer complete."""
        path = self._join(name)
        if isinstance(e, FileExistsError):
            what = f"{path} already exists and this dump did not write it"
        else:
            # numpy reports a short write as "N requested and M written", an OSError without errno.
            full = e.errno in _DISK_FULL or (e.errno is None and "requested and" in str(e))
            what = f"{'disk full' if full else (e.strerror or str(e))} writing {path}"
        self.abandoned = what
        return DumpError(e.errno, f"parity_torch: {what}: dump abandoned, nothing written as complete")

    def write(self, file, array):
        """Writes one tensor file; returns its entry fields (dtype, shape)."""
        if self.abandoned:
            raise DumpError(None, f"parity_torch: {self.path}: dump abandoned ({self.abandoned})")
        path = self._join(file)
        try:
            self._mark([file])
            fd = _create(path)
        except OSError as e:
            raise self._abandon(file, e) from e
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, array, allow_pickle=False)
                self.sizes[file] = f.tell()
        except OSError as e:  # the partial file goes: no file of the dump is ever short
            _unlink(path)
            raise self._abandon(file, e) from e
        return {"dtype": str(array.dtype) if array.dtype != np.bool_ else "bool", "shape": list(array.shape)}

    def remove(self, file):
        """Removes a file this dump wrote (one no kept layer lists)."""
        if file in self.sizes:
            _unlink(self._join(file))
            del self.sizes[file]

    def finish(self, manifest):
        """Every tensor on disk, then the manifest, atomically: a killed run leaves no manifest.
        Returns the bytes written in all."""
        if self.abandoned:
            raise DumpError(None, f"parity_torch: {self.path}: dump abandoned ({self.abandoned})")
        for name in self.sizes:  # only this dump's own files: never a link or a FIFO planted beside
            try:
                fd = os.open(self._join(name), os.O_RDONLY | os.O_NOFOLLOW)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as e:
                raise self._abandon(name, e) from e
        tmp = self._join(_TMP)
        try:
            data = (json.dumps(manifest, indent=1) + "\n").encode()
            _unlink(tmp)  # a stale temporary, or a link planted there: the name goes, never its target
            with os.fdopen(_create(tmp), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._join("manifest.json"))
            dirfd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(dirfd)
            finally:
                os.close(dirfd)
        except OSError as e:
            _unlink(tmp)
            raise self._abandon("manifest.json", e) from e
        _unlink(self._join(MARKER))  # complete: the manifest lists the files now
        return sum(self.sizes.values()) + len(data)
