"""What every Python test begins with: the repository's python/ folder and this one on sys.path,
the modules it needs imported or the test SKIPPED (exit code 77, which ctest reads as skipped),
PyTorch on two threads, and the parity binary under test taken from the command line."""
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (HERE, os.path.join(ROOT, "python")):
    if path not in sys.path:
        sys.path.insert(0, path)


def require(*names):
    """The modules `names`, imported; a missing one skips the whole test, saying what installs it."""
    try:
        modules = [importlib.import_module(n) for n in names]
    except ImportError as e:
        print(f"SKIPPED: {e} (install-deps installs python3-numpy, python3-torch and python3-torchvision)")
        sys.exit(77)
    if "torch" in names:
        modules[names.index("torch")].set_num_threads(2)
    return modules[0] if len(modules) == 1 else modules


def parity_binary():
    """The binary under test: the first argument, taken off argv so unittest does not read it,
    and exported as PARITY, where parity_torch's compare and bisect find it."""
    path = os.path.abspath(sys.argv.pop(1))
    os.environ["PARITY"] = path
    return path
