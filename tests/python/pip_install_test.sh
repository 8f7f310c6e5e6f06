#!/usr/bin/env bash
# README's offline install of parity_torch: `pip install --no-build-isolation ./python` with no
# package index (CI has no network), into a scratch folder; then the installed copy, not the
# source tree, is imported and dumps a two-layer model. Exit 77 (ctest: skipped) without pip or torch.
set -euo pipefail
src=$1
py=/usr/bin/python3
"$py" -m pip --version >/dev/null 2>&1 || { echo "SKIPPED: no pip for $py (install-deps installs python3-pip)"; exit 77; }
"$py" -c "import torch" 2>/dev/null || { echo "SKIPPED: no torch for $py"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/src"  # pip builds in place: keep the source tree clean
PIP_NO_INDEX=1 "$py" -m pip install --quiet --no-build-isolation --no-deps --target "$tmp/site" "$tmp/src" 2>&1 | grep -v "Running pip as the 'root' user" || true
test -f "$tmp/site/parity_torch/__init__.py" || { echo "FAIL: pip installed no parity_torch"; exit 1; }
cd "$tmp"
PYTHONPATH="$tmp/site" "$py" - <<'PY'
import os, torch, parity_torch
assert parity_torch.__file__.startswith(os.environ["PYTHONPATH"]), parity_torch.__file__
model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.SiLU()).eval()
with torch.no_grad(), parity_torch.dump("dump", model):
    model(torch.rand(1, 3, 8, 8))
assert os.path.exists("dump/manifest.json")
print("installed parity_torch", parity_torch.__version__, "from", os.path.dirname(parity_torch.__file__), "dumped", len(os.listdir("dump")), "files")
PY
