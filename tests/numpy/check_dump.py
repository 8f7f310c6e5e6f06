"""numpy's side of the dump test: every .npy a parity dump lists loads in numpy with the dtype and
shape its manifest.json gives. Usage: check_dump.py DUMP_DIR. Prints a count; exits 1 on the
first problem."""
import json
import os
import sys

import numpy as np


def main(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    checked = set()
    for layer in manifest["layers"]:
        for t in layer["inputs"] + layer["outputs"]:
            a = np.load(os.path.join(folder, t["file"]))
            if str(a.dtype) != t["dtype"] or list(a.shape) != t["shape"]:
                print(f"{t['file']}: numpy sees {a.dtype} {a.shape}, manifest says {t['dtype']} {t['shape']}")
                return 1
            checked.add(t["file"])
    on_disk = {n for n in os.listdir(folder) if n.endswith(".npy")}
    if on_disk != checked:
        print(f"files on disk but not in the manifest: {sorted(on_disk - checked)[:5]}")
        return 1
    print(f"{len(checked)} files load in numpy, {len(manifest['layers'])} layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
