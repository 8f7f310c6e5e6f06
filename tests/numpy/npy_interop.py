"""numpy's side of parity's .npy interop tests (run by tests/cli/numpy_interop_test.cpp).

  write DIR   numpy writes one file per dtype and shape (header versions 1.0, 2.0 and 3.0),
              filled with the pattern below; parity then reads and checks them.
  check DIR   numpy loads every file parity wrote into DIR and checks dtype, shape, values,
              header version 1.0 and a 64-byte aligned data offset.
  stats DIR   numpy writes big.npy (random normal float32) and expected.json with numpy's
              min, max, mean and std of it (accumulated in float64).

File names are <dtype>__<shape>__v<major>.npy with shape written as parity writes it (3x4,
"scalar" for rank 0). The value pattern is defined here and, independently, in the C++ test.
"""
import json
import os
import sys

import numpy as np

DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]
SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4, 5), (1, 2, 1, 3, 1, 2), (17, 19, 23)]


def pattern(dtype, n):
    i = np.arange(n, dtype=np.int64)
    if dtype in ("float16", "float32", "float64"):
        v = (((i * 37) % 101) - 50).astype(np.float64) / 8.0
        specials = {3: np.inf, 4: -np.inf, 5: np.nan, 6: -0.0}
        for k, s in specials.items():
            if k < n:
                v[k] = s
        return v.astype(dtype)
    if dtype == "int32":
        return ((i.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(2**32)).astype(np.uint32).view(np.int32)
    if dtype == "int64":
        with np.errstate(over="ignore"):
            return (i.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)).view(np.int64)
    if dtype == "uint8":
        return ((i * 7 + 3) % 256).astype(np.uint8)
    if dtype == "bool":
        return (i % 3) == 0
    raise ValueError(dtype)


def shape_name(shape):
    return "x".join(str(d) for d in shape) if shape else "scalar"


def parse_name(name):
    dtype, shape, version = name[: -len(".npy")].split("__")
    dims = () if shape == "scalar" else tuple(int(d) for d in shape.split("x"))
    return dtype, dims, int(version[1:])


def expected_array(dtype, shape):
    return pattern(dtype, int(np.prod(shape, dtype=np.int64))).reshape(shape)


def write(folder):
    count = 0
    for dtype in DTYPES:
        for shape in SHAPES:
            versions = (1, 2, 3) if shape == (3, 4) else (1,)
            for major in versions:
                a = expected_array(dtype, shape)
                with open(os.path.join(folder, f"{dtype}__{shape_name(shape)}__v{major}.npy"), "wb") as f:
                    np.lib.format.write_array(f, a, version=(major, 0))
                count += 1
    # Large enough for parity to memory-map it.
    big = expected_array("float32", (600, 600))
    np.save(os.path.join(folder, "float32__600x600__v1.npy"), big)
    print(f"wrote {count + 1} files")


def check(folder):
    failures, count = [], 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".npy"):
            continue
        dtype, shape, _ = parse_name(name)
        path = os.path.join(folder, name)
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            np.lib.format.read_array_header_1_0(f) if version == (1, 0) else None
            offset = f.tell()
        a = np.load(path)
        want = expected_array(dtype, shape)
        if version != (1, 0):
            failures.append(f"{name}: header version {version}, expected (1, 0)")
        if offset % 64:
            failures.append(f"{name}: data at byte {offset}, not 64-byte aligned")
        if a.dtype != np.dtype(dtype) or a.shape != shape:
            failures.append(f"{name}: got {a.dtype} {a.shape}, expected {dtype} {shape}")
            continue
        same = np.array_equal(a, want, equal_nan=a.dtype.kind == "f")
        if a.dtype.kind == "f":
            same = same and np.array_equal(np.signbit(a), np.signbit(want))
        if not same:
            failures.append(f"{name}: values differ from the pattern")
        count += 1
    for f in failures:
        print(f)
    print(f"checked {count} files, {len(failures)} failures")
    return 1 if failures or count == 0 else 0


def stats(folder):
    rng = np.random.default_rng(20261121)
    a = (rng.standard_normal((3, 640, 640), dtype=np.float32) * np.float32(2.5) + np.float32(0.75)).astype(np.float32)
    np.save(os.path.join(folder, "big.npy"), a)
    expected = {
        "min": float(a.min()),
        "max": float(a.max()),
        "mean": float(a.mean(dtype=np.float64)),
        "std": float(a.std(dtype=np.float64)),
    }
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f)
    print(json.dumps(expected))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check", "stats"):
        sys.exit(__doc__)
    sys.exit({"write": write, "check": check, "stats": stats}[sys.argv[1]](sys.argv[2]))
