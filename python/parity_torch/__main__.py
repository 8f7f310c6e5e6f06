"""python -m parity_torch --help: how to dump a PyTorch model for parity."""
import argparse
import sys

USAGE = """\
Dump every layer of a PyTorch model in parity's dump format, then find where two runs part ways:

    import parity_torch
    with parity_torch.dump("dump_cpu", model):          # an empty or new folder
        y = model(x)                                     # and any post-processing after it

    parity compare dump_cpu dump_cuda                    # every layer judged
    parity bisect dump_cpu dump_cuda                     # the first layer that diverged, and why

What is recorded:
  - leaf modules parity has a reference for (Conv2d, SiLU, Sigmoid, MaxPool2d, Upsample nearest):
    one layer named by the module path (model.2.m.0.cv1.conv), parameters as inputs;
  - every other tensor computation (torch.cat, +, F.silu, indexing, torch.nonzero, torchvision's
    nms, and the functions inside other leaf modules: batch_norm, relu, linear ...), named
    <enclosing module>.<op> (.1, .2 for later ones in one module call), or <module> alone for the
    call whose output the module returns (YOLOv5's Concat is model.12, a Bottleneck's residual add
    model.2.m.0, a C3's inner cat model.2.cat); a module called again is <path>:1, <path>:2;
  - views and copies (reshape, slicing, permute, .cpu()) are not layers: a consumer's input names
    its producer and is marked derived when it is not that output as is.
Calls parity has an op for get its canonical op line, and `parity compare` re-runs them on each
side's own inputs (the local check); other calls get the op torch.<name>, and LibTorch runs their
ATen operator again in float64 on each side's own inputs, judged within a bound a correct result
keeps (exact for moves and indexing, a few roundings element-wise, (K + 2) 2^-24 sum|terms| for
linear, matmul, softmax, layer_norm ...). A random op, or one with no known bound, is UNCHECKED
when it differs, saying why.

dump(out_dir, model, inputs=True, layers=None, calls=1, force=False, name=None, dtype=None)
  inputs  record layer inputs (the local check and `parity bisect --rerun` need them)
  layers  a regular expression: only the layers it matches are written
  calls   the first N forward calls of `model`, or a list of call indices (calls=[7])
  force   replace the parity dump in the folder (only the files it wrote; other files stay,
          and a folder of files no dump wrote is refused)
  name    the model name in the manifest (default: the model's class name)
  dtype   write floating tensors in this dtype (torch.float32 for a float64 run)
The dump object may be entered once per batch: the manifest is written, last and atomically, when a
block ends after the last selected call (or on .close()). An exception inside a block abandons the
dump: no manifest, and parity refuses the folder; so does a failed write (DumpError: "disk full
writing DIR/FILE") and the model run from another thread than the block's. A call on sparse
tensors with a dense result is recorded on their dense values; one with a sparse result (or on
complex32 tensors) runs unrecorded and is named on stderr and in the manifest's run.skipped; complex tensors are
recorded as their real views (torch.view_as_real). CUDA tensors are
copied to the host after a device synchronisation; the manifest records the device name and the
torch version.

scope(name): calls inside `with parity_torch.scope("nms"):` are named nms.<op>.

compare(a, b, **options) and bisect(a, b, **options) run the parity binary ($PARITY, else parity on
PATH) with --json and return a Report: .exit_code (0 pass, 1 failures, 2 structural), .rows,
.states, .counts, .summary, .origin (the origin's row, or None), .data (the whole JSON); printing it
gives the summary line and the origin. Options are parity's flags: precision="fp16" is
--precision fp16, tol_file= is --tol-file, failed=True is --failed; timeout=SECONDS (not a flag)
kills parity past it and raises ParityTimeout. ParityError (a RuntimeError)
carries parity's message when it cannot judge (exit 3 or more), e.g. for an unknown option.
    report = parity_torch.bisect("dump_cpu", "dump_cuda", precision="tf32")
    print(report)

wrap(fn, scope_name=None) on a dump: fn with each call recorded, so a loop need not be re-indented
and only what is wrapped becomes layers. YOLOv5's val.py, four lines pasted into run() after
model.warmup(...) (README.md, "Compare your own PyTorch model"):
    import parity_torch
    dumper = parity_torch.dump(f"dump_{device.type}", model.model, calls=1)
    model.forward = dumper.wrap(model.forward)
    globals()["non_max_suppression"] = dumper.wrap(non_max_suppression, "nms")
The manifest is written when the model's first call past the selected ones starts, at .close(), or
when Python exits; parity_torch then says on stderr how many layers it wrote, how big, and where.
"""


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m parity_torch", description=USAGE,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="store_true", help="print parity_torch's version")
    args = parser.parse_args(argv)
    if args.version:
        from . import __version__
        print(__version__)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
