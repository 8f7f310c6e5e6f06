"""parity_torch: dump a PyTorch model's layers in parity's format, for `parity compare` and
`parity bisect`, and run those from Python: parity_torch.compare(a, b) and parity_torch.bisect(a, b)
return the JSON report as a Report (python -m parity_torch --help)."""
import contextlib
import sys
import threading
import weakref

from . import patches
from .manifest import VERSION as __version__
from .recorder import Recorder
from .report import ParityError, ParityNotFound, ParityTimeout, Report, bisect, compare
from .writer import DumpError


class dump:
    """Records every layer of `model` that runs inside `with` blocks into the dump folder `out_dir`.

    out_dir  the dump folder; it must be empty or absent unless force=True
    force    replace the parity dump the folder holds: its manifest.json first, then only the files
             it lists; or a dump that never finished, by the `.parity_dump` file its recorder
             wrote first and added each file's name to. Other files stay. A folder with files but
             neither is refused (ValueError): they are not a parity dump's to remove
    model    the torch.nn.Module whose calls are recorded; layer names are its module paths
    inputs   record each layer's inputs too (needed for the local check and `bisect --rerun`)
    layers   a regular expression: only layers whose name it matches (re.search) are written
    calls    how many forward calls of `model` to record (the first N), or a list of call indices
             (calls=[7]: only the eighth batch); the post-processing run after a call belongs to it
    name     the model name written in the manifest (default: the model's class name)
    dtype    write every floating tensor in this dtype (torch.float32 for a float64 run compared
             against a float32 one); op lines then name that dtype

    The object may be entered many times (once per batch of a validation loop), one block at a
    time: the manifest is written, last and atomically, when a block ends after the last selected
    call; a block that ends before says once on stderr which calls are still to come, and a dump
    never completed says so when it is collected or Python exits. An exception inside a block
    abandons the dump: no manifest, so `parity compare` refuses the folder. So does the model
    running on a thread other than the block's (RuntimeError there, and at the block's end) and a
    failed write (DumpError, an OSError: "disk full writing DIR/FILE"; the partial file removed).
    A call on sparse tensors with a dense result (torch.spmm, torch.sparse.mm, `adj @ x`) is
    recorded on their dense values; one with a sparse result (or on complex32 tensors) runs as it
    would without the recorder and is not a layer: such calls are named on stderr at the end and in
    the manifest's run.skipped.
    Files are created exclusively and never through a link.
    """

    def __init__(self, out_dir, model, inputs=True, layers=None, calls=1, force=False, name=None, dtype=None):
        self._recorder = Recorder(out_dir, model, inputs, layers, calls, force, name, dtype)
        self._wraps = 0
        weakref.finalize(self, _never_completed, self._recorder, calls)

    def __enter__(self):
        self._recorder.enter()
        return self

    def __exit__(self, kind, value, tb):
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
            if recorder.thread == threading.get_ident():  # called inside another wrapped call or block
                with scope(scope_name) if scope_name else contextlib.nullcontext():
                    return fn(*args, **kwargs)
            recorder.enter()
            finished = False
            try:
                with scope(scope_name) if scope_name else contextlib.nullcontext():
                    result = fn(*args, **kwargs)
                finished = True
                return result
            finally:
                recorder.exit(failed=not finished, finish=recorder.past_selection(), block=False)

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
    frames = [(r, r.names.open_scope(name)) for r in list(patches.active())]  # the dumps open on this thread
    try:
        yield
    finally:
        for r, frame in frames:
            r.names.close_scope(frame)


def _never_completed(recorder, calls):
    """A dump collected, or left at exit, with blocks entered but no manifest: said, not silent."""
    if recorder.call >= 0 and not recorder.done and not recorder.failed and recorder.thread is None:
        print(f"parity_torch: {recorder.folder.path}: no manifest written: {recorder.pending()} (calls={calls!r}); "
              "close() writes the calls recorded so far", file=sys.stderr)


__all__ = ["dump", "scope", "compare", "bisect", "Report", "ParityError", "ParityNotFound", "ParityTimeout",
           "DumpError", "__version__"]
