"""A self-contained PyTorch YOLOv5 v7.0 yolov5n (BatchNorm fused), checked layer by layer against
`parity run yolov5n`. Run: /usr/bin/python3 tests/python/yolov5_style.py [parity]; exit 1 on a mismatch.

Module paths are those YOLOv5 has after fuse() (model.0.conv, model.2.m.0.cv1.act, model.9.m,
model.24.m.0, ...), so parity's layer names are looked up as they are. One deliberate difference:
YOLOv5 shares one class-level SiLU (Conv.default_act) between all Convs, so its named_modules()
lists only model.0.act; here each Conv owns its SiLU (same paths and state_dict; hooks see each call).
"""
import atexit, json, math, os, shutil, subprocess, sys, tempfile  # noqa: E401

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as e:  # ctest: skipped (install-deps installs python3-torch and python3-torchvision)
    print(f"SKIPPED: {e}")
    sys.exit(77)

ANCHORS = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
STRIDES = [8, 16, 32]


class Conv(nn.Module):  # common.py Conv after fuse(): conv (bias = folded BatchNorm), then SiLU
    shared_act = None  # YOLOv5's Conv.default_act: one SiLU object held by every Conv (build_yolov5n)

    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=True)
        self.act = Conv.shared_act if Conv.shared_act is not None else nn.SiLU()

    def forward(self, x):
        return self.act(self.conv(x))


class Bottleneck(nn.Module):  # e=1.0 as C3 builds it
    def __init__(self, c1, c2, shortcut=True):
        super().__init__()
        self.cv1, self.cv2 = Conv(c1, c2, 1, 1), Conv(c2, c2, 3, 1)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        return x + self.cv2(self.cv1(x)) if self.add else self.cv2(self.cv1(x))


class C3(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        c_ = c2 // 2
        self.cv1, self.cv2, self.cv3 = Conv(c1, c_, 1, 1), Conv(c1, c_, 1, 1), Conv(2 * c_, c2, 1, 1)
        self.m = nn.Sequential(*(Bottleneck(c_, c_, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(nn.Module):  # one MaxPool2d called three times
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1, self.cv2 = Conv(c1, c_, 1, 1), Conv(c_ * 4, c2, 1, 1)
        self.m = nn.MaxPool2d(kernel_size=k, stride=1, padding=k // 2)

    def forward(self, x):
        x = self.cv1(x)
        return self.cv2(torch.cat((x, y1 := self.m(x), y2 := self.m(y1), self.m(y2)), 1))  # m called 3 times


class Concat(nn.Module):
    def forward(self, x):
        return torch.cat(x, 1)


class Detect(nn.Module):  # yolo.py Detect, inference path; anchors buffer in stride units as in YOLOv5
    def __init__(self, nc, ch):
        super().__init__()
        self.nc, self.no, self.nl, self.na = nc, nc + 5, len(ANCHORS), len(ANCHORS[0]) // 2
        self.stride = torch.tensor(STRIDES, dtype=torch.float32)
        a = torch.tensor(ANCHORS, dtype=torch.float32).view(self.nl, -1, 2)
        self.register_buffer("anchors", a / self.stride.view(-1, 1, 1))
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)
        # As yolo.py: grids are made on the first forward at a size and kept, so a model run once
        # before (its warm-up) makes none; DetectionModel._apply moves them with the model.
        self.grid = [torch.empty(0) for _ in range(self.nl)]
        self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]

    def _make_grid(self, nx, ny, i):
        shape = 1, self.na, ny, nx, 2
        d, t = self.anchors[i].device, self.anchors[i].dtype  # as yolo.py: the grid where the model is, in its dtype
        yv, xv = torch.meshgrid(torch.arange(ny, device=d, dtype=t), torch.arange(nx, device=d, dtype=t), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape) - 0.5  # cell offsets, so xy*2 - 0.5 spans the cell
        anchor_grid = (self.anchors[i] * self.stride[i]).view(1, self.na, 1, 1, 2).expand(shape)  # pixels
        return grid, anchor_grid

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
            xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)
            xy = (xy * 2 + self.grid[i]) * self.stride[i]
            wh = (wh * 2) ** 2 * self.anchor_grid[i]
            z.append(torch.cat((xy, wh, conf), 4).view(bs, self.na * nx * ny, self.no))
        return torch.cat(z, 1), x


class DetectionModel(nn.Module):
    """yolov5n.yaml parsed as yolo.py parse_model does: self.model is an nn.Sequential whose
    layers carry .f (from), .i (index); outputs some later layer reads are saved."""

    def __init__(self, nc=80, depth_multiple=0.33, width_multiple=0.25):
        super().__init__()
        w = lambda c: int(math.ceil(c * width_multiple / 8) * 8)  # make_divisible(c * gw, 8)
        d = lambda n: max(round(n * depth_multiple), 1) if n > 1 else n
        spec = [  # (from, module, args) exactly as yolov5n.yaml (v7.0) lists them
            (-1, Conv, (64, 6, 2, 2)), (-1, Conv, (128, 3, 2)), (-1, C3, (128, 3)),
            (-1, Conv, (256, 3, 2)), (-1, C3, (256, 6)), (-1, Conv, (512, 3, 2)), (-1, C3, (512, 9)),
            (-1, Conv, (1024, 3, 2)), (-1, C3, (1024, 3)), (-1, SPPF, (1024, 5)),
            (-1, Conv, (512, 1, 1)), (-1, nn.Upsample, ()), ([-1, 6], Concat, ()), (-1, C3, (512, 3, False)),
            (-1, Conv, (256, 1, 1)), (-1, nn.Upsample, ()), ([-1, 4], Concat, ()), (-1, C3, (256, 3, False)),
            (-1, Conv, (256, 3, 2)), ([-1, 14], Concat, ()), (-1, C3, (512, 3, False)),
            (-1, Conv, (512, 3, 2)), ([-1, 10], Concat, ()), (-1, C3, (1024, 3, False)),
            ([17, 20, 23], Detect, ()),
        ]
        ch, layers, self.save = [], [], set()  # ch[j]: output channels of layer j
        for i, (f, m, args) in enumerate(spec):
            c1 = ch[f if isinstance(f, int) else f[0]] if ch else 3  # the image before layer 0
            if m is nn.Upsample:
                mod, c2 = nn.Upsample(None, 2, "nearest"), c1
            elif m is Concat:
                mod, c2 = Concat(), sum(ch[j] for j in f)
            elif m is Detect:
                mod, c2 = Detect(nc, [ch[j] for j in f]), None
            else:
                c2 = w(args[0])
                mod = C3(c1, c2, d(args[1]), *args[2:]) if m is C3 else m(c1, c2, *args[1:])
            mod.f, mod.i = f, i
            self.save.update(j % i for j in ([f] if isinstance(f, int) else f) if j != -1)
            layers.append(mod)
            ch.append(c2)
        self.model = nn.Sequential(*layers)

    def _apply(self, fn):  # yolo.py BaseModel._apply: Detect's stride and cached grids follow .to()
        self = super()._apply(fn)
        m = self.model[-1]
        m.stride = fn(m.stride)
        m.grid = list(map(fn, m.grid))
        m.anchor_grid = list(map(fn, m.anchor_grid))
        return self

    def forward(self, x):  # yolo.py BaseModel._forward_once
        y = []
        for m in self.model:
            if m.f != -1:
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
            x = m(x)
            y.append(x if m.i in self.save else None)
        return x


def build_yolov5n(nc=80, shared_act=False):
    """shared_act: one SiLU module for every Conv, as YOLOv5 has it (named_modules lists it once)."""
    Conv.shared_act = nn.SiLU() if shared_act else None
    try:
        return DetectionModel(nc).eval()
    finally:
        Conv.shared_act = None


def calibrated_yolov5n(shared_act=False):
    """The seeded model and image main() checks: small uniform weights, each conv then scaled so its
    output std is 1 on the image (LSUV-style: plain init lets the signal fade 10x), and Detect's
    objectness and class logits lowered so xc, the class threshold, nms and max_det all cut."""
    torch.manual_seed(0)
    model = build_yolov5n(shared_act=shared_act)
    x = torch.rand(1, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.uniform_(-1, 1) if name.endswith(".weight") else p.uniform_(-0.1, 0.1)
        hooks = [m.register_forward_hook(unit_std) for m in model.modules() if isinstance(m, nn.Conv2d)]
        model(x)
        for h in hooks:
            h.remove()
        for m in model.model[24].m:
            m.bias.view(3, 85)[:, 4] -= 5.5
            m.bias.view(3, 85)[:, 5:] -= 1.5
    return model, x


def export_weights(model, folder):
    """<state_dict key>.npy, float32 (parity reads the conv weights/biases; model.24.anchors is extra)."""
    os.makedirs(folder, exist_ok=True)
    for k, v in model.state_dict().items():
        np.save(os.path.join(folder, k + ".npy"), v.detach().cpu().numpy().astype(np.float32))


def non_max_suppression(prediction, conf_thres=0.001, iou_thres=0.6, max_det=300):
    """val.py's call (multi_label=True, class-aware): per image a [n, 6] tensor x1 y1 x2 y2 conf cls."""
    max_wh, max_nms = 7680, 30000  # class offset larger than any box; cap on boxes into nms
    xc = prediction[..., 4] > conf_thres  # objectness candidates
    out = []
    for xi, x in enumerate(prediction):  # empty selections flow through as [0, 6]
        x = x[xc[xi]].clone()
        x[:, 5:] *= x[:, 4:5]  # class confidence = obj * cls
        box = torch.cat((x[:, :2] - x[:, 2:4] / 2, x[:, :2] + x[:, 2:4] / 2), 1)  # xywh -> xyxy
        i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).T  # every (box, class) above threshold
        x = torch.cat((box[i], x[i, 5 + j, None], j[:, None].float()), 1)
        x = x[x[:, 4].argsort(descending=True)[:max_nms]]
        keep = torchvision.ops.nms(x[:, :4] + x[:, 5:6] * max_wh, x[:, 4], iou_thres)  # offset boxes per class
        out.append(x[keep[:max_det]])
    return out


def unit_std(conv, inputs, out):  # forward hook: rescale the conv's parameters and its output in place
    s = out.std()
    conv.weight /= s
    conv.bias /= s
    return out / s


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parity = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "cli", "parity")
    model, x = calibrated_yolov5n()

    # Outputs of every call of every module (SPPF's m runs three times, parity's model.9.m:1 and :2),
    # and the inputs of C3's cv3 / SPPF's cv2, which are the concatenations parity names <module>.cat.
    names = {m: n for n, m in model.named_modules()}
    calls, cat_of = {}, {}
    for m, n in names.items():
        m.register_forward_hook(lambda mod, i, o: calls.setdefault(names[mod], []).append(o[0] if isinstance(o, tuple) else o))
        if isinstance(m, (C3, SPPF)):
            (m.cv3 if isinstance(m, C3) else m.cv2).register_forward_pre_hook(  # update() returns None:
                lambda mod, i, n=n: cat_of.update({n + ".cat": i[0]}))           # the input goes on unchanged
    with torch.no_grad():
        pred = model(x)[0]
    dets = non_max_suppression(pred)
    sizes = np.cumsum([0] + [3 * (64 // s) ** 2 for s in STRIDES])  # decode.i = rows of model.24's output

    tmp = tempfile.mkdtemp(prefix="yolov5_style.")
    atexit.register(shutil.rmtree, tmp, True)
    wdir, xfile, ddir = os.path.join(tmp, "w"), os.path.join(tmp, "x.npy"), os.path.join(tmp, "dump")
    export_weights(model, wdir)
    np.save(xfile, x.numpy())
    cmd = [parity, "run", "yolov5n", "--img", "64", "--weights", wdir, "--input", xfile, "--dump", ddir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout.strip())
    if r.returncode:
        print(r.stderr, "\nFAIL: parity run failed (exit %d)" % r.returncode)
        return 1
    layers = json.load(open(os.path.join(ddir, "manifest.json")))["layers"]
    load = lambda l: np.load(os.path.join(ddir, l["outputs"][0]["file"]))

    bad = []  # parameters: same keys and shapes both ways
    sd = {k: tuple(v.shape) for k, v in model.named_parameters()}
    pk = {l["name"] + s: tuple(l["inputs"][j]["shape"]) for l in layers if l["op"] == "conv2d"
          for s, j in ((".weight", 1), (".bias", 2))}
    bad += [f"param {k}: torch {sd.get(k)} parity {pk.get(k)}" for k in sorted(set(sd) | set(pk)) if sd.get(k) != pk.get(k)]

    direct, derived, unmatched, worst = 0, 0, [], 0.0
    for l in (l for l in layers if l["name"].startswith("model.")):
        name = l["name"]
        path, _, k = name.partition(":")
        if path in calls:
            t, direct = calls[path][int(k or 0)], direct + 1
        elif path in cat_of:
            t, derived = cat_of[path], derived + 1
        elif path.startswith("model.24.decode."):
            lv = int(path.rsplit(".", 1)[1])
            t, derived = calls["model.24"][0][:, sizes[lv]:sizes[lv + 1]], derived + 1
        else:
            unmatched.append(name)
            continue
        a, b = t.numpy(), load(l)
        if a.shape != b.shape:
            bad.append(f"{name}: torch {list(a.shape)} parity {list(b.shape)}")
            continue
        diff, scale = float(np.abs(a - b).max()), float(np.abs(b).max())
        rel = diff / max(scale, 1e-6)  # relative to the layer's largest value
        worst = max(worst, rel)
        if rel > 1e-4:
            bad.append(f"{name}: max|diff| {diff:.3g}, max|parity| {scale:.3g}, rel {rel:.3g}")
        print(f"  {name:24s} {str(list(b.shape)):18s} max|diff| {diff:.3e}  rel {rel:.2e}")
    # Every leaf module (conv, SiLU, pool, upsample, concat) must be a parity layer: else torch
    # computes something parity does not. Containers (C3, Conv, Sequential, ...) are not layers.
    seen = {l["name"].split(":")[0] for l in layers}
    extra = [n for m, n in names.items() if n.startswith("model.") and not list(m.children()) and n not in seen]
    bad += [f"torch module {n} has no parity layer" for n in extra] + [f"parity layer {n} has no torch counterpart" for n in unmatched]

    # Detections, loosely: parity's nms.0.output vs ours row by row (near-ties may reorder).
    out = [load(l) for l in layers if l["name"] == "nms.0.output"]
    theirs, ours = (out[0] if out else np.zeros((0, 6), np.float32)), dets[0].numpy()
    n = min(len(ours), len(theirs))
    same = sum(np.allclose(ours[i], theirs[i], rtol=1e-3, atol=1e-3) for i in range(n))
    print(f"detections: torch {len(ours)}, parity {len(theirs)}; {same}/{n} rows agree within 1e-3, in order")

    print(f"\nSUMMARY: {direct} parity layers matched module outputs, {derived} matched derived tensors "
          f"(C3/SPPF cat = cv3/cv2 input, decode.i = slice of model.24); worst relative difference {worst:.2e}")
    if bad:
        print("FAIL: the architecture does not match parity's yolov5n:", *bad, sep="\n  ")
        return 1
    if len(ours) != len(theirs) or same < 0.9 * max(n, 1):
        print("WARNING: the detections differ more than float32 rounding should make them")
    print("OK: every parity model layer has its torch counterpart and agrees to float32 rounding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
