"""parity_torch: dump a PyTorch model's layers in parity's format, for `parity compare` and
`parity bisect`, and run those from Python: parity_torch.compare(a, b) and parity_torch.bisect(a, b)
return the JSON report as a Report (python -m parity_torch --help)."""
import contextlib

from .recorder import VERSION as __version__, Recorder, _Frame
from .report import ParityError, ParityNotFound, Report, bisect, compare

_active = []


class dump:
    """Records every layer of `model` that runs inside `with` blocks into the dump folder `out_dir`.

    out_dir  the dump folder; it must be empty or absent unless force=True
    model    the torch.nn.Module whose calls are recorded; layer names are its module paths
    inputs   record each layer's inputs too (needed for the local check and `bisect --rerun`)
    layers   a regular expression: only layers whose name it matches (re.search) are written
    calls    how many forward calls of `model` to record (the first N), or a list of call indices
             (calls=[7]: only the eighth batch); the post-processing run after a call belongs to it
    name     the model name written in the manifest (default: the model's class name)
    dtype    write every floating tensor in this dtype (torch.float32 for a float64 run compared
             against a float32 one); op lines then name that dtype

    The object may be entered many times (once per batch of a validation loop): the manifest is
    written, last and atomically, when a block ends after the last selected call. An exception
    inside a block abandons the dump: no manifest, so `parity compare` refuses the folder.
    """

    def __init__(self, out_dir, model, inputs=True, layers=None, calls=1, force=False, name=None, dtype=None):
        self._recorder = Recorder(out_dir, model, inputs, layers, calls, force, name, dtype)
        self._wraps = 0

    def __enter__(self):
        self._recorder.enter()
        _active.append(self._recorder)
        return self

    def __exit__(self, kind, value, tb):
        _active.remove(self._recorder)
        self._recorder.exit(failed=kind is not None)
        return False

    def wrap(self, fn, scope_name=None):
        """`fn` with each call recorded into this dump (inside scope(scope_name) when given): a loop
        need not be re-indented, and only what is wrapped becomes layers. In YOLOv5's val.py:

            model.forward = dumper.wrap(model.forward)
            globals()["non_max_suppression"] = dumper.wrap(non_max_suppression, "nms")

        The manifest is written when the model's first call past the selected ones starts (the
        selected calls' post-processing is then over), at close(), or when Python exits; from then
        on the wrapped functions run as they are, at their own speed."""
        import atexit
        import functools
        recorder = self._recorder
        if not self._wraps:
            atexit.register(self.close)
        self._wraps += 1

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            if recorder.done or recorder.failed:
                return fn(*args, **kwargs)
            recorder.enter()
            _active.append(recorder)
            finished = False
            try:
                with scope(scope_name) if scope_name else contextlib.nullcontext():
                    result = fn(*args, **kwargs)
                finished = True
                return result
            finally:
                _active.remove(recorder)
                recorder.exit(failed=not finished, finish=recorder.past_selection())

        return recorded

    def close(self):
        """Writes the manifest now, with the calls recorded so far (fewer batches than `calls`)."""
        if not self._recorder.done and not self._recorder.failed:
            self._recorder.finish()

    @property
    def complete(self):
        """Whether the manifest was written."""
        return self._recorder.done


@contextlib.contextmanager
def scope(name):
    """Names the calls made inside the block `<name>.<op>`, as a module path would (post-processing
    outside the model: `with parity_torch.scope("nms"): ...`)."""
    frames = []
    for r in _active:
        frame = _Frame(name)
        r.stack.append(frame)
        frames.append((r, frame))
    try:
        yield
    finally:
        for r, frame in frames:
            if frame in r.stack:
                r.stack.remove(frame)
            r.name_function_layers(frame)


__all__ = ["dump", "scope", "compare", "bisect", "Report", "ParityError", "ParityNotFound", "__version__"]
