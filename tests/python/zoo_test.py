"""Users' models of every family, two correct runs at reduced precision, and planted defects.

Run by ctest (label python) as: /usr/bin/python3 tests/python/zoo_test.py <parity binary> [MODEL...].
Each model of tests/python/zoo.py is dumped in float32 and compared with the same model in float64
(written as float32), with bfloat16 weights and under bfloat16 autocast (where PyTorch 1.13 runs it on
the CPU): every pair exits 0 with no FAILED, UNCHECKED or structural row. Each planted defect (one
element off in a kernel's output, or written between two layers) is the origin at its layer, on its
side, in both orders. Exit 77 (ctest: skipped) when /usr/bin/python3 has no torch or torchvision.
"""
import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

import support

torch, _ = support.require("torch", "torchvision")

import zoo  # noqa: E402

PARITY = None


def compare(a, b):
    report = b + (".vs-a.json" if a < b else ".json")
    r = subprocess.run([PARITY, "compare", a, b, "--json", report], capture_output=True, text=True)
    with open(report) as f:
        return r.returncode, r.stdout + r.stderr, json.load(f)


class InTempFolder(unittest.TestCase):
    """A test class whose dumps go to a folder of its own, removed when its tests are done."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()


class Zoo(InTempFolder):
    def check_model(self, name):
        built = zoo.MODELS[name]()
        base = os.path.join(self.tmp.name, name)
        reference = zoo.dump(os.path.join(base, "float32"), built, "float32")
        ran = []
        for regime in ("float64", "bf16", "bf16-autocast"):
            try:
                other = zoo.dump(os.path.join(base, regime), built, regime)
            except zoo.NotRunHere as e:  # torch 1.13's CPU kernels lack some bfloat16 ops
                print(f"{name} {regime}: {e}")
                continue
            ran.append(regime)
            with self.subTest(regime=regime):
                code, out, report = compare(reference, other)
                bad = [f"{l['state']} {l['name']} [{l['op']}]: {(l.get('reason') or '')[:300]}" for l in report["layers"]
                       if l["state"] in ("FAILED", "UNCHECKED") or l.get("origin")]
                self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0),
                                 f"{name} float32 against {regime}:\n" + "\n".join(bad))
        self.assertTrue(ran, f"{name}: PyTorch ran it in no other regime here")
        regime = zoo.DEFECT_REGIMES.get(name) or next(r for r in ("bf16", "bf16-autocast", "float64") if r in ran)  # the defects' run
        for module, call, layer in built[3]:
            planted = zoo.dump(os.path.join(base, f"{regime}-defect-{layer}-{call}"), built, regime, defect=(module, call))
            for a, b, side in ((reference, planted, "B"), (planted, reference, "A")):
                with self.subTest(defect=(module, call), side=side):
                    code, out, report = compare(a, b)
                    origin = next((l for l in report["layers"] if l.get("origin")), None)
                    self.assertEqual(code, 1, out[-3000:])
                    self.assertIsNotNone(origin, out[-3000:])
                    self.assertEqual((origin["name"], origin["defective"]), (layer, side), origin["reason"][:500])


class Identity(InTempFolder):
    """What makes one model's two runs look like two models, when they are not: a warm-up (values a
    module works out on its first call and keeps), a copy of a quantized model (its packed weights'
    addresses)."""

    def dumps(self, name, first, second, call, x):
        paths = []
        for tag, m in (("a", first), ("b", second)):
            path = os.path.join(self.tmp.name, f"{name}-{tag}")
            with torch.no_grad(), zoo.parity_torch.dump(path, m):
                call(m, x)
            paths.append(path)
        return paths

    def test_a_warmed_up_model_against_a_cold_one(self):
        model, x, call, _ = zoo.mask_rcnn()

        def warm():
            m = copy.deepcopy(model)
            with torch.no_grad():
                call(m, x)  # MultiScaleRoIAlign works out its scales now, and keeps them
            return m
        for a, b in (self.dumps("warm", warm(), copy.deepcopy(model), call, x), self.dumps("cold", copy.deepcopy(model), warm(), call, x)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])
            self.assertTrue(any("into Python numbers" in (l.get("reason") or "") for l in report["layers"]), out[-3000:])

    def test_batched_nms_on_its_cpu_path_against_its_cuda_path(self):
        x = torch.rand(1500, 4, generator=torch.Generator().manual_seed(3))
        a = self.dumps("nms-cpu", BoxHead(), BoxHead(), lambda m, x: m(x), x)[0]
        with shifted_batched_nms_path():
            b = self.dumps("nms-cuda", BoxHead(), BoxHead(), lambda m, x: m(x), x)[0]
        for first, second in ((a, b), (b, a)):
            code, out, report = compare(first, second)
            self.assertEqual((code, report["failed"], report["structural"], report["unchecked"]), (0, 0, 0, 0), out[-3000:])
            nms = [l for l in report["layers"] if l["op"] == "nms"]
            self.assertEqual(len(nms), 1, out[-3000:])

    def test_batched_nms_of_bfloat16_boxes_shifted_in_bfloat16(self):
        # A float32 model against its .bfloat16() copy: the shift rounds to bfloat16 (about 4 pixels
        # at 2000), so the two keep lists differ, each valid for its own shifted boxes.
        g = torch.Generator().manual_seed(5)
        x, classes = torch.rand(800, 6, generator=g), (torch.rand(800, generator=g) * 20).long()
        paths = []
        for tag, model, data in (("f32", HalfBoxes(), x), ("bf16", HalfBoxes().bfloat16(), x.bfloat16())):
            paths.append(os.path.join(self.tmp.name, f"half-boxes-{tag}"))
            with nms_in_float32(), torch.no_grad(), zoo.parity_torch.dump(paths[-1], model, dtype=torch.float32):
                model(data, classes)
        for a, b in (paths, paths[::-1]):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])

    def test_a_paste_at_corners_the_runs_rounded_differently(self):
        for scaled in (False, True):
            paths = self.pastes(f"paste-{scaled}", Paste(scaled=scaled), Paste(scaled=scaled))
            for a, b in (paths, paths[::-1]):
                code, out, report = compare(a, b)
                self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])
                pasted = [l for l in report["layers"] if "setitem" in l["name"]]
                self.assertEqual(len(pasted), 1, out[-3000:])
                self.assertNotEqual(pasted[0]["params"], pasted[0]["params_b"], out[-3000:])  # the corners: tensor(2), tensor(3)
                self.assertGreater(pasted[0]["outputs"][0]["max_abs"], 0, out[-3000:])

    def test_a_paste_whose_corner_one_run_clamped_to_a_number(self):
        # torchvision's paste clamps a box by Python's max(box[0], 0): a number on the run whose
        # box fell below it, the box's tensor on the other (PyTorch 2.11's TF32 Mask R-CNN on an
        # H200, exit 2 "B ran another call" before): `floor`, max(corner, 3), 3 against tensor(3);
        # `zero`, max(10 corner - 25, 0), 0 against tensor(5) beside a tensor end.
        for tag, rows in (("floor", lambda c: (max(c, 3), 6)), ("zero", lambda c: (max(c * 10 - 25, 0), c + 3))):
            paths = self.pastes(f"paste-{tag}", Paste(rows=rows), Paste(rows=rows))
            for a, b in (paths, paths[::-1]):
                code, out, report = compare(a, b)
                with self.subTest(tag=tag):
                    self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])
                    pasted = [l for l in report["layers"] if "setitem" in l["name"]]
                    self.assertEqual(len(pasted), 1, out[-3000:])
                    lines = (pasted[0]["params"], pasted[0]["params_b"])  # slice(3, ...) or slice(0, ...) against slice(tensor(...), ...)
                    self.assertTrue(any(re.search(r"slice\((3|0),", l) for l in lines) and any("slice(tensor(" in l for l in lines), out[-3000:])

    def test_a_paste_at_a_corner_read_into_python(self):
        # `x[int(y0):6]`, `x[y0.item():6]` (the crop's shape follows the number): exit 2 on two
        # correct runs before, "B ran another call" at the crop and the paste.
        for tag, rows in (("int", lambda c: (int(c), 6)), ("item", lambda c: (c.item(), 6))):
            paths = self.pastes(f"paste-{tag}", Paste(rows=rows), Paste(rows=rows))
            for a, b in (paths, paths[::-1]):
                code, out, report = compare(a, b)
                with self.subTest(tag=tag):
                    self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])
                    pasted = [l for l in report["layers"] if "setitem" in l["name"]]
                    self.assertEqual(len(pasted), 1, out[-3000:])
                    self.assertNotEqual(pasted[0]["params"], pasted[0]["params_b"], out[-3000:])  # slice(2, ...) against slice(3, ...)

    def test_what_data_may_move_is_paired_with_where_it_came_from(self):
        # After a .tolist() of many small integers, a paste offset by one in B's code (int(y0) + 1)
        # read as "a number the run read" (both numbers were read, by other elements); a linear
        # with a bias on one side only, after a crop at a tensor corner, read as a shape that
        # followed the data; B's code dividing by another element it read than A's (exit 0 until
        # 2026-11-27: each number was one its run read).
        reads = Paste(rows=lambda c: (int(c), 6), reads=True)
        paths = self.pastes("offset", reads, Paste(rows=lambda c: (int(c) + 1, 6), reads=True))
        linear = self.pastes("bias", CropIntoLayers(bias=True), CropIntoLayers(bias=False))
        divided = self.pastes("divided", Divided(), Divided(other=True))
        for tag, (a, b) in (("offset", paths), ("bias", linear), ("divided", divided)):
            for first, second in ((a, b), (b, a)):
                code, out, report = compare(first, second)
                with self.subTest(tag=tag):
                    self.assertEqual(code, 2, out[-3000:])
                    self.assertGreater(report["structural"], 0, out[-3000:])

    def test_a_crop_at_a_tensor_corner_into_layers_that_name_their_inputs(self):
        # parity's own lines name their tensors (`sigmoid x=4x4`, `conv2d x=... w=...`), not in0:
        # their shapes follow the corner as in0's do (exit 2, "B ran another call", before).
        paths = self.pastes("crop-named", CropIntoLayers(), CropIntoLayers())
        for a, b in (paths, paths[::-1]):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])
            named = [l for l in report["layers"] if l["params"].startswith(("sigmoid x=", "conv2d x=", "torch.nn.functional.linear"))]
            self.assertEqual(len(named), 3, out[-3000:])
            self.assertTrue(all(l["params"] != l["params_b"] for l in named), out[-3000:])

    def test_a_paste_whose_code_differs_is_named(self):
        # Other columns on B (a Python number beside the corner, where it pastes or what it
        # crops), or corners the models hold rather than compute (before any data parted, or after:
        # exit 0 there, before 2026-11-27): the model code, whatever the corner.
        # A number where A's code computes the corner (`fixed`), or a column B's code takes from the
        # corner (`col`), pasting a number: exit 0 when any number faced a tensor as data. A
        # number B's code fixes where A's reads its corner into Python (`read`).
        for tag, a_model, b_model, b_mixed in (("cols", Paste(), Paste(cols=(2, 6)), True), ("src", Paste(), Paste(src=(1, 5)), True),
                                              ("held", Paste(corner=torch.tensor(2)), Paste(corner=torch.tensor(3)), False),
                                              ("held-parted", Paste(corner=torch.tensor(2), parted=True),
                                               Paste(corner=torch.tensor(3), parted=True), True),
                                              ("fixed", Paste(fill=True), Paste(fill=True, rows=lambda c: (0, 6)), True),
                                              ("col", Paste(fill=True), Paste(fill=True, cols=lambda c: (c, 5)), True),
                                              ("read", Paste(rows=lambda c: (int(c), 6)), Paste(rows=lambda c: (3, 6)), True)):
            paths = self.pastes(f"paste-{tag}", a_model, b_model, b_mixed)
            for a, b in (paths, paths[::-1]):
                code, out, report = compare(a, b)
                with self.subTest(tag=tag):
                    self.assertEqual((code, report["structural"]), (2, 1), out[-3000:])

    def pastes(self, name, a_model, b_model, b_mixed=True):
        """A float32 run of a_model and a bfloat16 autocast run of b_model (or float32 again)."""
        x = torch.rand(6, 6, generator=torch.Generator().manual_seed(3))
        x[0, :2] = torch.tensor([1.0, 1.999])
        paths = []
        for tag, model, mixed in (("a", a_model, False), ("b", b_model, b_mixed)):
            paths.append(os.path.join(self.tmp.name, f"{name}-{tag}"))
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16) if mixed else contextlib.nullcontext(), \
                    zoo.parity_torch.dump(paths[-1], model, dtype=torch.float32):
                model(x)
        return paths

    def test_a_quantized_model_against_a_copy_of_itself(self):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).eval()
        q = torch.quantization.quantize_dynamic(net, {torch.nn.Linear}, dtype=torch.qint8)
        a, b = self.dumps("quantized", q, copy.deepcopy(q), lambda m, x: m(x), torch.randn(2, 16))
        code, out, report = compare(a, b)
        self.assertEqual((code, report["failed"], report["structural"]), (0, 0, 0), out[-3000:])


class BoxHead(torch.nn.Module):
    """Boxes, scores and classes into torchvision's batched_nms, with 1500 boxes: more than the 4000
    coordinates above which it runs nms class by class on the CPU, fewer than the 20000 of CUDA,
    where it runs one nms of boxes shifted by class."""

    def forward(self, x):
        boxes = torch.cat([x[:, :2] * 60, x[:, :2] * 60 + 4 + x[:, 2:] * 20], 1)
        keep = zoo.torchvision.ops.batched_nms(boxes, x.sum(1).sigmoid(), (x[:, 3] * 1000).long() % 5, 0.5)
        return boxes[keep] * 2


class Paste(torch.nn.Module):
    """Mask R-CNN's paste_mask_in_image: a mask put into a canvas at its box's integer corner, a
    tensor slice bound; the corner is a product the two runs round to different integers (1 + 1.999
    is 2.999 in float32, and 3 in bfloat16, which holds 1.999 as 2). `rows(corner)`: the rows it
    pastes (Python's max and min clamp them, as torchvision's paste clamps a box to the canvas);
    `cols`: the columns, or `cols(corner)`; `src`: which columns it crops; `corner`: a tensor the
    model holds instead of one it computes; `scaled`: the crop goes through a layer first; `fill`:
    it pastes a number instead; `reads`: it reads many small integers into Python first; `parted`:
    the runs' data part first (a crop at the corner it computes), whatever corner it pastes at."""

    def __init__(self, cols=(1, 5), src=(0, 4), corner=None, scaled=False, rows=lambda c: (c, 6), fill=False, reads=False, parted=False):
        super().__init__()
        self.cols, self.src, self.corner, self.scaled, self.rows, self.fill, self.reads = cols, src, corner, scaled, rows, fill, reads
        self.parted = parted

    def forward(self, x):
        if self.reads:
            (x * 8).long().flatten().tolist()  # 36 small integers read into Python
        computed = torch.matmul(x[:1, :2], torch.ones(2, 1)).long()[0, 0] if self.corner is None or self.parted else None
        corner = computed if self.corner is None else self.corner
        parted = (x * 1.0)[computed:6].sum() if self.parted else 0
        lo, hi = self.rows(corner)
        cols = self.cols(corner) if callable(self.cols) else self.cols
        canvas = torch.zeros(8, 8)
        crop = torch.sigmoid(x.float())[lo:hi, self.src[0]:self.src[1]]  # its shape follows the corner too
        canvas[lo:hi, cols[0]:cols[1]] = 1.0 if self.fill else crop * 1.0 if self.scaled else crop
        return canvas * 2 + parted


class Divided(torch.nn.Module):
    """x over its largest magnitude read into Python (`x / m.item()`), after a .tolist() of x; or
    (`other`) over another element of that list."""

    def __init__(self, other=False):
        super().__init__()
        self.other = other

    def forward(self, x):
        read, largest = (x * 1.0).flatten().tolist(), (x * 1.0).abs().amax().item()
        return x / (read[3] if self.other else largest)


class CropIntoLayers(torch.nn.Module):
    """A crop of a layer's output at Paste's corner into a sigmoid, a conv and a linear (with a
    bias, or not)."""

    def __init__(self, bias=True):
        super().__init__()
        torch.manual_seed(0)
        self.conv, self.lin, self.bias = torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.Linear(4, 3), bias

    def forward(self, x):
        corner = torch.matmul(x[:1, :2], torch.ones(2, 1)).long()[0, 0]
        crop = (x * 1.0)[corner:6, 0:4]
        lin = torch.nn.functional.linear(crop, self.lin.weight, self.lin.bias if self.bias else None)
        return torch.sigmoid(crop).sum() + self.conv(crop[None, None]).sum() + lin.sum()


class HalfBoxes(torch.nn.Module):
    """800 boxes of 20 classes up to 1000 pixels, made in the model's dtype, into batched_nms: fewer
    than its 4000 coordinates, so it shifts them by class in their own dtype."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.l = torch.nn.Linear(6, 6)

    def forward(self, x, classes):
        y = self.l(x)
        boxes = torch.cat([y[:, :2] * 600, y[:, :2] * 600 + 30 + y[:, 2:4] * 100], 1)
        return boxes[zoo.torchvision.ops.batched_nms(boxes, y[:, 4].sigmoid(), classes, 0.5)] * 2


def nms_in_float32():
    """torchvision's nms as its CUDA autocast wrapper runs it: half boxes and scores in float32."""
    original = zoo.torchvision.ops.boxes.nms
    return unittest.mock.patch.object(zoo.torchvision.ops.boxes, "nms", lambda b, s, t: original(b.float(), s.float(), t))


def shifted_batched_nms_path():
    """B runs batched_nms's shifted path, as CUDA does."""
    boxes_module = zoo.torchvision.ops.boxes
    return unittest.mock.patch.object(boxes_module, "_batched_nms_vanilla", boxes_module._batched_nms_coordinate_trick)


class Steered(torch.nn.Module):
    """A mask whose bools flip between float32 and bfloat16 (control flow that follows the data),
    then model code that may differ on B: another slice, a residual from another layer, another
    align_corners."""

    def __init__(self, slice_b=False, rewired=False, corners=False):
        super().__init__()
        self.c1, self.c2, self.c3 = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.Conv2d(4, 4, 1)
        self.slice_b, self.rewired, self.corners = slice_b, rewired, corners

    def forward(self, x):
        h = self.c1(x)
        z = self.c2(h * (h > 0.05))
        r = self.c3(z) + (h if self.rewired else z)
        s = r[:, 1:] if self.slice_b else r[:, :3]
        return torch.nn.functional.interpolate(s, scale_factor=2, mode="bilinear", align_corners=self.corners)


class Corrupting(torch.nn.Module):
    """A view of a conv's output taken, then a kernel writes a wrong value into the conv's output
    before the view is read (CorruptingSigmoid below)."""

    def __init__(self):
        super().__init__()
        self.conv, self.head = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Linear(8, 4)

    def forward(self, x):
        y = self.conv(x)
        v = y.permute(0, 2, 3, 1)
        s = torch.sigmoid(y)
        return self.head(v), s


class CorruptingSigmoid(zoo.TorchFunctionMode):
    """sigmoid's kernel, reading its input right and then writing into it: one element off."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == "sigmoid":
            with torch._C.DisableTorchFunction():
                args[0].view(-1)[37] += 0.25 * max(1.0, abs(float(args[0].view(-1)[37])))
        return result


class SizedByTensor(torch.nn.Module):
    """A range and fills whose sizes are 0-d tensors the model computes: beside a number, or alone."""

    def forward(self, x):
        corner = torch.matmul(x[:1, :2], torch.ones(2, 1, dtype=x.dtype)).long()[0, 0]
        filled = torch.full((corner, 4), 1.5).sum() + torch.zeros((corner, corner + 1)).add(0.5).sum()
        return torch.arange(corner, 6).float().sum() * 2 + filled


class CorruptingFactory(zoo.TorchFunctionMode):
    """A factory (`name`) whose kernel writes its second element one off."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == self.name:
            with torch._C.DisableTorchFunction():
                result.view(-1)[1] += 1
        return result


class WritesThroughViews(torch.nn.Module):
    """Recorded in-place calls through views of a layer's output before the next layer reads it."""

    def __init__(self):
        super().__init__()
        self.conv, self.conv2 = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        y[:, :2].mul_(2)
        p = y.permute(0, 2, 3, 1).contiguous()
        p[..., 0].add_(1.0)
        return self.conv2(p.permute(0, 3, 1, 2))


class PlantedAdd(zoo.TorchFunctionMode):
    """add_'s kernel giving one element 5% off."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == "add_":
            with torch._C.DisableTorchFunction():
                result.view(-1)[3] *= 1.05
        return result


class PartialWriteAfterWhole(torch.nn.Module):
    """clamp_ writes all of a layer's output, then add_ a slice of it, then the next layer reads
    all of it: its input holds add_'s values in the slice and clamp_'s elsewhere."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 16)

    def forward(self, x):
        h = self.a(x)
        h.clamp_(min=-0.5)
        h[:, :3].add_(1.0)
        return self.b(h)


class PlantedInPlace(zoo.TorchFunctionMode):
    """The call `name`'s kernel giving one element of the tensor it returns 25% off, in place (outside
    any slice written later; dropout in eval returns its input itself)."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == self.name:
            with torch._C.DisableTorchFunction():
                result[tuple(n - 1 for n in result.shape)] *= 1.25  # the last element: [1, 5, 15] of clamp_'s
        return result


class EvalDropout(torch.nn.Module):
    """DETR's feed-forward block: in eval, dropout returns its input itself."""

    def __init__(self):
        super().__init__()
        self.linear1, self.dropout, self.linear2 = torch.nn.Linear(16, 32), torch.nn.Dropout(0.1), torch.nn.Linear(32, 16)

    def forward(self, x):
        return x + self.linear2(self.dropout(torch.relu(self.linear1(x))))


class CastThenReturned(torch.nn.Module):
    """llama's RMSNorm (x.float() ... .type_as(x)) and its end (logits.float()), and a permuted copy
    returned: copies a kernel makes between layers and after the last."""

    def __init__(self):
        super().__init__()
        self.emb, self.head = torch.nn.Linear(8, 16), torch.nn.Linear(16, 6)

    def forward(self, x):
        h = self.emb(x)
        f = h.float()
        h = (f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + 1e-6)).type_as(h)
        logits = self.head(h)
        return logits.float(), logits.permute(0, 2, 1).contiguous()


class PlantedComplex(zoo.TorchFunctionMode):
    """The complex call `name`'s kernel giving one element of its complex output (the sixth) 25% off,
    or `factor` times what it should be."""

    def __init__(self, name, factor=1.25):
        super().__init__()
        self.name, self.factor = name, factor

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == self.name and torch.is_tensor(result) and result.is_complex():
            with torch._C.DisableTorchFunction():
                at = tuple(zoo._unravel(5, result.shape))
                result[at] = result[at] * self.factor
        return result


class PlantedFirstResult(zoo.TorchFunctionMode):
    """The call `name`'s kernel giving one element (the sixth) of its first result 25% off."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        first = result[0] if isinstance(result, tuple) else result
        if getattr(func, "__name__", "") == self.name and torch.is_tensor(first) and first.is_floating_point():
            with torch._C.DisableTorchFunction():
                first.view(-1)[5] *= 1.25
        return result


class FrontEnd(torch.nn.Module):
    """An audio front end: a learnt filter, torch.stft with a Hann window of the run's type, and the
    signal back by torch.istft."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)

    def forward(self, x):
        window = torch.hann_window(32, dtype=x.dtype)
        spectrum = torch.stft(self.a(x).reshape(-1), 32, hop_length=8, window=window, return_complex=True)
        return spectrum, torch.istft(spectrum * 0.5, 32, hop_length=8, window=window)


class Tampered(zoo.TorchFunctionMode):
    """The first call `name`'s kernel returning `fix(result, args)` instead of its result."""

    def __init__(self, name, fix):
        super().__init__()
        self.name, self.fix, self.done = name, fix, False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not self.done and getattr(func, "__name__", "") == self.name:
            self.done = True
            with torch._C.DisableTorchFunction():
                result = self.fix(result, args)
        return result


def swap_first_tie(values, indices):
    """Two tied values' indices swapped along the last dim (a sort that is not stable)."""
    v, i = values.reshape(-1, values.shape[-1]), indices.reshape(-1, indices.shape[-1]).clone()
    for r in range(v.shape[0]):
        for c in range(v.shape[1] - 1):
            if v[r, c] == v[r, c + 1]:
                i[r, c], i[r, c + 1] = i[r, c + 1].clone(), i[r, c].clone()
                return i.reshape(indices.shape)
    raise AssertionError("no tie to swap")


class Selections(torch.nn.Module):
    """Stable sorts of values rounded to quarters (ties), the rows' medians, a float32 product
    inside a bfloat16 model (`.float()` before cdist, as torch 1.13's CPU wants), and a stable sort
    of values a float64 run tells apart that tie once written as float32."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)

    def forward(self, x):
        q = (self.a(x) * 4).round() / 4
        s = torch.sort(q, stable=True)
        near_one = self.a(x).flatten() * 1e-8 + 1  # apart in float64, tied once written as float32
        return (s.values, s.indices, torch.argsort(q[0], stable=True), torch.median(q, -1).values,
                torch.cdist(q.float(), q.float() + 1), torch.argsort(near_one, stable=True))


class RootGuard(torch.nn.Module):
    """A root guarded by its type's eps times `factor` (a number derived from finfo)."""

    def __init__(self, factor):
        super().__init__()
        self.a, self.factor = torch.nn.Linear(8, 8), factor

    def forward(self, x):
        h = self.a(x)
        eps = torch.finfo(h.dtype).eps
        return h / torch.sqrt(h.pow(2).mean(-1, keepdim=True) + eps * self.factor), torch.sigmoid(h).clamp(eps, 1 - eps)


class ClampedLog(torch.nn.Module):
    """log of a clamp at a literal floor."""

    def __init__(self, floor):
        super().__init__()
        self.a, self.floor = torch.nn.Linear(8, 8), floor

    def forward(self, x):
        return self.a(x).clamp(min=self.floor).log()


class IntoABuffer(torch.nn.Module):
    """A product written into a float32 buffer (`out=`) from two tensors of the model's type: a half
    model's kernel computes it in the half type."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        buf = torch.empty(h.shape, dtype=torch.float32)
        torch.mul(h, h, out=buf)
        return buf.sum(-1)


class Spectra(torch.nn.Module):
    """A batch of 64 signals, one 1000 times louder than the rest (an audio batch), transformed by rfft."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)

    def forward(self, x):
        loud = torch.ones(64, 1, dtype=x.dtype, device=x.device)
        loud[3] = 1000
        return torch.fft.rfft(self.a(x) * loud).abs()


class RoundTrip(torch.nn.Module):
    """A value rounded through bfloat16 between two layers (as some quantisation code does)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.b(self.a(x).to(torch.bfloat16).to(x.dtype))


class Float32Between(torch.nn.Module):
    """A float32 GELU and a float32 SiLU module (recorded as parity's op) between layers bfloat16
    autocast runs: a Linear, and a GRU cell, whose products autocast runs in bfloat16 inside while it
    reads and returns float32."""

    def __init__(self):
        super().__init__()
        self.inp, self.cell, self.out = torch.nn.Linear(16, 32), torch.nn.GRUCell(32, 32), torch.nn.Linear(32, 4)
        self.act = torch.nn.SiLU()

    def forward(self, x):
        h = torch.nn.functional.gelu(self.inp(x).float())
        h = self.act(self.cell(h, h))
        return self.out(h)


class SiluFirst(torch.nn.Module):
    """A SiLU module on the input: float32 under autocast, bfloat16 in a bfloat16 model."""

    def __init__(self):
        super().__init__()
        self.act, self.out = torch.nn.SiLU(), torch.nn.Linear(16, 8)

    def forward(self, x):
        return self.out(self.act(x * 3))


class PlantedFloat32(zoo.TorchFunctionMode):
    """Function `name`'s kernel giving its largest element 0.4% off: no float32 kernel's rounding,
    well within bfloat16's."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == self.name:
            with torch._C.DisableTorchFunction():
                flat = result.view(-1)
                worst = int(flat.abs().argmax())
                flat[worst] = flat[worst] * 1.004
        return result


class AutocastInside(torch.nn.Module):
    """Autocast entered inside forward, around a GRU cell only (`enabled` off: a float32 run of the
    same code), with a float32 GELU before it."""

    def __init__(self, enabled):
        super().__init__()
        self.enabled = enabled
        self.inp, self.cell, self.out = torch.nn.Linear(16, 32), torch.nn.GRUCell(32, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.inp(x))
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.enabled):
            h = self.cell(h, h)
        return self.out(h.to(x.dtype))


class StepsOfANumber(torch.nn.Module):
    """Step functions of a Python number, as a grid or a phase is worked out: torch 1.13's bfloat16
    CPU kernels round the number to bfloat16 first (0.3 as 0.30078125), CUDA's to float32."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(3.0))

    def forward(self, x):
        y = x * self.scale
        steps = torch.remainder(y, 0.3) + torch.fmod(y, 0.7) + torch.floor_divide(y, 0.3) + torch.div(y, 0.3, rounding_mode="floor") + y // 0.7
        steps = steps + 0.3 % (y.abs() + 1) + 0.7 // (y.abs() + 0.5)  # reflected: __rmod__, __rfloordiv__
        # trunc divides, then truncates the quotient as its kernel rounded it; a grid's cells, whose
        # coordinates round differently in each run
        cells = torch.div(torch.arange(64, dtype=y.dtype) * 0.1, 0.1, rounding_mode="trunc")
        return steps + torch.div(y, 0.7, rounding_mode="trunc") + torch.div(y, -0.3, rounding_mode="trunc") + cells


class PlantedStep(zoo.TorchFunctionMode):
    """remainder's kernel giving one element 0.1 off, one far from a step (0.15 of 0.3): no rounding
    of 0.3 or of its input explains that (next to a step, moving the input by a unit wraps it); or
    (`trunc`) div's with rounding_mode='trunc' one step off where its quotient is far from one."""

    def __init__(self, trunc=False):
        super().__init__()
        self.trunc = trunc

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        with torch._C.DisableTorchFunction():
            if name == "remainder" and not self.trunc:
                flat = result.view(-1)
                flat[int((flat.float() - 0.15).abs().argmin())] += 0.1
            elif name == "div" and self.trunc and (kwargs or {}).get("rounding_mode") == "trunc" and args[0].dim() == 2:
                quotient = (args[0].float() / args[1]).view(-1)
                result.view(-1)[int((quotient - quotient.round() - 0.5).abs().argmin())] += 1
        return result


class HierarchicalSampler(torch.nn.Module):
    """NeRF's hierarchical sampling, with no parameters: a cdf of the weights, and where evenly
    spaced samples fall in it. A float64 run's cdf ends at 1 + 2^-52 or 1 - 2^-53; written as float32
    it ends at 1, where the last sample (1 itself, right=True) falls on the other side."""

    def forward(self, w):
        w = w + 1e-5
        cdf = torch.cumsum(w / torch.sum(w, -1, keepdim=True), -1)
        u = torch.linspace(0.0, 1.0, 16, dtype=w.dtype).expand(w.shape[0], 16).contiguous()
        return torch.searchsorted(cdf, u, right=True)


class PlantedIndex(zoo.TorchFunctionMode):
    """searchsorted's kernel giving one index 3 off, in the middle of a row: no step of a
    rounding moves it that far."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == "searchsorted":
            with torch._C.DisableTorchFunction():
                result[5, 8] += 3
        return result


class GraphConvolution(torch.nn.Module):
    """Kipf's GCN as pygcn writes it: a normalised adjacency, sparse, times the features, by
    torch.spmm, torch.sparse.mm, torch.sparse.addmm and @, made sparse inside forward (`to_sparse`,
    the dense adjacency changed in place after) or given sparse; and GAT's pattern: edge weights
    computed, made a sparse matrix by sparse_coo_tensor, and a dense tensor plus a sparse one."""

    def __init__(self, nodes=20):
        super().__init__()
        self.w1, self.w2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 3)
        self.nodes = nodes
        self.register_buffer("edges", torch.stack([torch.arange(nodes), torch.arange(nodes).roll(3)]))

    def forward(self, x, adjacency, given):
        dense = adjacency.to(x.dtype) * 1.0
        a = dense.to_sparse()
        dense.mul_(2.0)  # a is what dense was
        h = torch.relu(torch.spmm(a, self.w1(x)))
        h = torch.sparse.addmm(h, a, h, beta=0.5) + torch.sparse.mm(a, h)
        weights = torch.sigmoid((h[self.edges[0]] * h[self.edges[1]]).sum(-1))
        attention = torch.sparse_coo_tensor(self.edges, weights, (self.nodes, self.nodes))
        h = torch.sparse.mm(attention, h) + (h * 0.5).to_sparse()
        return torch.log_softmax(a @ self.w2(h), -1) + torch.spmm(given, x).sum(1, keepdim=True)


def normalised_adjacency(nodes=20, edges=60, seed=3):
    g = torch.Generator().manual_seed(seed)
    e = torch.randint(0, nodes, (2, edges), generator=g)
    adj = torch.zeros(nodes, nodes).index_put_((e[0], e[1]), torch.ones(edges)) + torch.eye(nodes)
    return adj / adj.sum(1, keepdim=True)


class PlantedProduct(zoo.TorchFunctionMode):
    """A kernel (`name`, its result `width` wide) with one element of its result, `at`, off."""

    def __init__(self, name, width, at=(7, 1)):
        super().__init__()
        self.name, self.width, self.at = name, width, at

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        first = result[0] if isinstance(result, tuple) else result  # roi_pool: (output, argmax)
        if getattr(func, "__name__", "") == self.name and first.shape[-1] == self.width and first.dim() == len(self.at):
            with torch._C.DisableTorchFunction():
                first[self.at] += 0.25
        return result


class PooledBoxes(torch.nn.Module):
    """RoIPool over features, its boxes given: where a bin starts and ends is rounded."""

    def __init__(self):
        super().__init__()
        self.conv, self.pool = torch.nn.Conv2d(3, 4, 3, padding=1), zoo.torchvision.ops.RoIPool((2, 2), 0.5)

    def forward(self, x, boxes):
        return self.pool(self.conv(x), boxes)


def bf16_autocast(below=None):
    """CPU bfloat16 autocast, entered with `below` (a mode under the recorder's) first."""
    stack = contextlib.ExitStack()
    if below is not None:
        stack.enter_context(below)
    stack.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
    return stack


class Hazards(InTempFolder):
    """What an adversarial review found (2026-11-26): each a false verdict before its fix."""

    def dump(self, tag, model, x, dtype=torch.float32, call=None, below=None):
        path = os.path.join(self.tmp.name, tag)
        m = copy.deepcopy(model).to(dtype)
        with torch.no_grad(), (below or contextlib.nullcontext()), zoo.parity_torch.dump(path, m, dtype=torch.float32):
            (call or (lambda mm, v: mm(v)))(m, x.to(dtype))
        return path

    def assert_named(self, good, bad, layer, note=""):
        """The defect in dump `bad` named at `layer` on its side, `good` the other side, in both
        orders; the origins' rows."""
        origins = []
        for first, second, side in ((good, bad, "B"), (bad, good, "A")):
            code, out, report = compare(first, second)
            origin = next((l for l in report["layers"] if l.get("origin")), None)
            self.assertEqual((code, origin and origin["name"], origin and origin["defective"]), (1, layer, side), note + out[-2000:])
            origins.append(origin)
        return origins

    def test_a_range_and_a_fill_sized_by_a_tensor(self):
        # torch.arange(t, 6), torch.full((t, 4), v) and torch.zeros((t, t + 1)) with t a 0-d
        # tensor the runs round apart: ATen takes numbers there, as Python passes t (UNCHECKED, exit
        # 1 on two correct runs, before; a size of tensors alone until 2026-11-27); a wrong element
        # of each is named.
        x = torch.rand(6, 6, generator=torch.Generator().manual_seed(3))
        x[0, :2] = torch.tensor([1.0, 1.999])  # a corner of 2 in float32, 3 in bfloat16
        a, b = self.dump("sized-f32", SizedByTensor(), x), self.dump("sized-bf16", SizedByTensor(), x, torch.bfloat16)
        for first, second in ((a, b), (b, a)):
            code, out, report = compare(first, second)
            self.assertEqual((code, report["unchecked"], report["structural"]), (0, 0, 0), out[-3000:])
        for call in ("arange", "full", "zeros"):
            self.assert_named(a, self.dump(f"sized-bad-{call}", SizedByTensor(), x, below=CorruptingFactory(call)), call)

    def test_model_code_after_steering_is_still_named(self):
        torch.manual_seed(0)
        base, x = Steered(), torch.rand(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
        a = self.dump("steered-a", base, x)
        code, out, _ = compare(a, self.dump("steered-bf16", base, x, torch.bfloat16))
        self.assertEqual(code, 0, out[-2000:])  # 2 of 1024 mask bools flip: the data steers
        for kind in ("slice_b", "rewired", "corners"):
            other = Steered(**{kind: True})
            other.load_state_dict(base.state_dict())
            code, out, report = compare(a, self.dump(f"steered-{kind}", other, x, torch.bfloat16))
            self.assertEqual((code, report["structural"] > 0), (2, True), f"{kind}: {out[-2000:]}")

    def test_a_value_written_into_a_viewed_output_is_named_on_its_side(self):
        torch.manual_seed(0)
        net, x = Corrupting().eval(), torch.rand(1, 3, 6, 6, generator=torch.Generator().manual_seed(1))
        a = self.dump("corrupt-a", net, x)
        for dtype in (torch.float32, torch.float64, torch.bfloat16):
            b = self.dump(f"corrupt-{dtype}", net, x, dtype, below=CorruptingSigmoid())
            code, out, report = compare(a, b)
            origin = next((l for l in report["layers"] if l.get("origin")), None)
            self.assertEqual((code, origin and origin["name"], origin and origin["defective"]), (1, "head", "B"), out[-2000:])

    def test_an_output_only_one_run_computes_is_not_excused_by_being_read_into_python(self):
        torch.manual_seed(0)
        body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        x = torch.randn(2, 8, generator=torch.Generator().manual_seed(1))
        a = self.dump("python-a", body, x, call=lambda m, v: m(v).tolist())
        b = self.dump("python-b", body, x, call=lambda m, v: (torch.softmax(m(v), -1) * 3 - 1).tolist())
        code, out, _ = compare(a, b)
        self.assertEqual(code, 2, out[-2000:])

    def test_writes_through_views_pass_and_a_defective_one_is_the_origin(self):
        torch.manual_seed(0)
        net, x = WritesThroughViews().eval(), torch.randn(2, 3, 6, 7, generator=torch.Generator().manual_seed(1))
        for inference in (False, True):
            mode = torch.inference_mode if inference else torch.no_grad  # inference tensors keep no version counter
            with mode():
                a = self.dump(f"views-a-{inference}", net, x)
                b = self.dump(f"views-b-{inference}", net, x, torch.float64)
                bad = self.dump(f"views-bad-{inference}", net, x, torch.float64, below=PlantedAdd())
            code, out, _ = compare(a, b)
            self.assertEqual(code, 0, out[-2000:])
            code, out, report = compare(a, bad)
            origin = next((l for l in report["layers"] if l.get("origin")), None)
            self.assertEqual((code, report["structural"], origin and origin["op"], origin and origin["defective"]),
                             (1, 0, "torch.Tensor.add_", "B"), out[-2000:])

    def test_a_slice_written_after_the_whole_tensor_pairs_at_bfloat16(self):
        # The next layer's input came from add_ (the slice) and clamp_ (the rest): before, it was
        # checked A against B where add_ agreed, and clamp_'s rounding near 0 failed it (exit 2).
        torch.manual_seed(0)
        net, x = PartialWriteAfterWhole().eval(), torch.randn(2, 6, 8, generator=torch.Generator().manual_seed(2))
        a, b = self.dump("partial-a", net, x), self.dump("partial-bf16", net, x, torch.bfloat16)
        for first, second in ((a, b), (b, a)):
            code, out, _ = compare(first, second)
            self.assertEqual(code, 0, out[-2000:])
        for name in ("clamp_", "add_"):
            bad = self.dump(f"partial-bad-{name}", net, x, torch.bfloat16, below=PlantedInPlace(name))
            code, out, report = compare(a, bad)
            origin = next((l for l in report["layers"] if l.get("origin")), None)
            self.assertEqual((code, origin and origin["op"], origin and origin["defective"]), (1, f"torch.Tensor.{name}", "B"),
                             out[-2000:])

    def test_a_value_written_into_an_output_passed_through_as_it_is_is_named(self):
        # dropout in eval returns relu's output itself: a kernel writing into it there leaves the
        # chain empty (the output as it is), which was never replayed: exit 0 at bf16 before.
        torch.manual_seed(0)
        net, x = EvalDropout().eval(), torch.randn(6, 2, 16, generator=torch.Generator().manual_seed(1))
        a = self.dump("dropout-a", net, x)
        for dtype in (torch.float32, torch.bfloat16):
            self.assertEqual(compare(a, self.dump(f"dropout-{dtype}", net, x, dtype))[0], 0)
            bad = self.dump(f"dropout-bad-{dtype}", net, x, dtype, below=PlantedInPlace("dropout"))
            for origin in self.assert_named(a, bad, "linear2"):
                self.assertIn("as that layer gave it", origin["reason"])

    def test_a_wrong_copy_is_named_where_it_is_read_and_after_the_last_layer(self):
        # Copies (x.float() of bfloat16 values, .contiguous()) were taken to be their source as it is:
        # a wrong value in one was blamed on the layer that read it, and went unseen in what the
        # model returns (exit 0).
        torch.manual_seed(0)
        net, x = CastThenReturned().eval(), torch.randn(2, 5, 8, generator=torch.Generator().manual_seed(1))
        a = self.dump("copies-a", net, x)
        for dtype in (torch.float64, torch.bfloat16):
            b = self.dump(f"copies-{dtype}", net, x, dtype)
            for first, second in ((a, b), (b, a)):
                self.assertEqual(compare(first, second)[0], 0, compare(first, second)[1][-2000:])
        cases = [(torch.bfloat16, "float", "pow", "through .float()"), (torch.bfloat16, "contiguous", "output.1", "through .permute"),
                 (torch.float64, "contiguous", "output.1", "through .permute")]
        for dtype, call, layer, how in cases:
            bad = self.dump(f"copies-bad-{dtype}-{call}", net, x, dtype, below=PlantedInPlace(call))
            for origin in self.assert_named(a, bad, layer, f"{dtype} {call}: "):
                self.assertIn(how, origin["reason"])

    def test_a_wrong_complex_value_is_named_at_its_call(self):
        # Complex calls were skipped: their results reached the next layer as data no layer made
        # (exit 1 on two correct runs, a defect in them blamed elsewhere). The zoo's complex_rotary
        # passes; here, one wrong element of each complex kernel is named at its call and side.
        built = zoo.complex_rotary()
        net, x = built[0], built[1]
        a = self.dump("complex-a", net, x)
        for dtype, call, layer in ((torch.bfloat16, "mul", "mul"), (torch.float64, "mul", "mul"),
                                   (torch.bfloat16, "fft_rfft2", "fft_rfft2"), (torch.bfloat16, "einsum", "einsum")):
            bad = self.dump(f"complex-bad-{dtype}-{call}", net, x, dtype, below=PlantedComplex(call))
            for first, second, side in ((a, bad, "B"), (bad, a, "A")):
                code, out, report = compare(first, second)
                origin = next((l for l in report["layers"] if l.get("origin")), None)
                self.assertEqual((code, report["unchecked"], origin and origin["name"], origin and origin["defective"]),
                                 (1, 0, layer, side), f"{dtype} {call}: {out[-2000:]}")

    def test_a_wrong_bin_of_a_quiet_signal_beside_a_loud_one_is_named(self):
        # A transform's bound was the largest bin of the whole call's transform of the moduli: a
        # loud signal's DC term hid a quiet one's bin twice what it should be. Each transform now has
        # its own, from its output's 2-norm.
        torch.manual_seed(0)
        net, x = Spectra().eval(), torch.randn(64, 64, generator=torch.Generator().manual_seed(1))
        a = self.dump("spectra-a", net, x)
        code, out, _ = compare(a, self.dump("spectra-b", net, x, torch.float64))
        self.assertEqual(code, 0, out[-2000:])
        bad = self.dump("spectra-bad", net, x, torch.float64, below=PlantedComplex("fft_rfft", 2.0))
        self.assert_named(a, bad, "fft_rfft")

    def test_a_wrong_frame_of_a_short_time_fourier_transform_is_named(self):
        # torch.stft and torch.istft had no row: a wrong value in them was named nowhere.
        torch.manual_seed(0)
        net, x = FrontEnd().eval(), torch.randn(16, 64, generator=torch.Generator().manual_seed(1))
        a = self.dump("stft-a", net, x)
        code, out, _ = compare(a, self.dump("stft-b", net, x, torch.float64))
        self.assertEqual(code, 0, out[-2000:])
        for layer, planted in (("stft", PlantedComplex("stft")), ("istft", PlantedFirstResult("istft"))):
            bad = self.dump(f"{layer}-bad", net, x, torch.float64, below=planted)
            self.assert_named(a, bad, layer)

    def test_selections_are_checked_as_their_calls_promise(self):
        # A stable sort's swapped ties passed (the order was checked for argsort only; a 1-D float32
        # argsort was recorded as parity's own op, stable dropped); a median's value off to a
        # neighbouring element passed within the type's tolerance; a float32 product 2% off inside a
        # bfloat16 model passed at bfloat16's tolerance. A float64 run's stable argsort, whose values
        # tie only once written as float32, was named.
        torch.manual_seed(0)
        net, x = Selections().eval(), torch.randn(6, 8, generator=torch.Generator().manual_seed(1))
        a = self.dump("sel-a", net, x)
        code, out, _ = compare(a, self.dump("sel-b", net, x, torch.float64))
        self.assertEqual(code, 0, out[-2000:])
        bf16 = self.dump("sel-bf16", net, x, torch.bfloat16)
        code, out, _ = compare(a, bf16)
        self.assertEqual(code, 0, out[-2000:])
        neighbour = lambda r, _: type(r)((r.values + torch.where(r.values == r.values.max(), -1, 1) * 0.25, r.indices))  # noqa: E731
        for layer, name, fix in (("sort", "sort", lambda r, _: type(r)((r.values, swap_first_tie(r.values, r.indices)))),
                                 ("argsort", "argsort", lambda r, args: swap_first_tie(args[0].gather(-1, r), r)),
                                 ("median", "median", neighbour),
                                 ("cdist", "cdist", lambda r, _: r * 1.02)):
            bad = self.dump(f"sel-bad-{layer}", net, x, torch.bfloat16, below=Tampered(name, fix))
            code, out, report = compare(bf16, bad)
            origin = next((l for l in report["layers"] if l.get("origin")), None)
            self.assertEqual((code, origin and origin["name"], origin and origin["defective"]), (1, layer, "B"), out[-2000:])

    def test_a_bag_of_embeddings_summed_pairs_float32_with_float64(self):
        # embedding_bag's other outputs are its kernel's bookkeeping: float32's CPU sum path leaves
        # offset2bag empty, float64's fills it. Judged, the correct float32 side was named (exit 2).
        torch.manual_seed(0)
        bag = torch.nn.EmbeddingBag(10, 4, mode="sum").eval()
        idx, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])
        call = lambda m, _: m(idx, offsets)  # noqa: E731
        a = self.dump("bag-a", bag, idx, call=call)
        code, out, _ = compare(a, self.dump("bag-b", bag, idx, torch.float64, call=call))
        self.assertEqual(code, 0, out[-2000:])
        bad = self.dump("bag-bad", bag, idx, torch.float64, call=call, below=PlantedFirstResult("embedding_bag"))
        self.assert_named(a, bad, "embedding_bag")

    def test_a_number_derived_from_finfo_pairs_as_its_derivation(self):
        # eps * 10 of each run's type is one call (it was another call, exit 2, at bfloat16); eps * 100
        # on one side is another model.
        torch.manual_seed(0)
        ten, x = RootGuard(10).eval(), torch.randn(2, 8, generator=torch.Generator().manual_seed(1))
        hundred = RootGuard(100).eval()
        hundred.load_state_dict(ten.state_dict())
        a = self.dump("guard-a", ten, x)
        code, out, _ = compare(a, self.dump("guard-bf16", ten, x, torch.bfloat16))
        self.assertEqual(code, 0, out[-2000:])
        code, out, report = compare(a, self.dump("guard-bf16-other", hundred, x, torch.bfloat16))
        self.assertEqual(code, 2, out[-2000:])
        self.assertTrue(any("ran another call" in (l.get("reason") or "") for l in report["layers"]), out[-2000:])
        # 1e-6 is float32's finfo.resolution and a literal many models write: against 1e-2 it is
        # another call, not each type's resolution.
        fine, coarse = ClampedLog(1e-6).eval(), ClampedLog(1e-2).eval()
        coarse.load_state_dict(fine.state_dict())
        code, out, _ = compare(self.dump("floor-a", fine, x), self.dump("floor-b", coarse, x, torch.bfloat16))
        self.assertEqual(code, 2, out[-2000:])

    def test_a_product_into_a_float32_buffer_is_judged_as_its_kernel_computed_it(self):
        # torch.mul(h, h, out=buf) of bfloat16 h: a bfloat16 product widened, not a float32 island.
        torch.manual_seed(0)
        net, x = IntoABuffer().eval(), torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
        code, out, _ = compare(self.dump("buf-a", net, x), self.dump("buf-b", net, x, torch.bfloat16))
        self.assertEqual(code, 0, out[-2000:])

    def test_batch_norm_in_training_reads_its_running_statistics_as_they_were(self):
        torch.manual_seed(0)  # its kernel updates them in place, with no version change
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).train()
        x = torch.rand(4, 3, 12, 12, generator=torch.Generator().manual_seed(1))
        code, out, _ = compare(self.dump("train-a", net, x), self.dump("train-b", net, x, torch.float64))
        self.assertEqual(code, 0, out[-2000:])

    def test_a_float32_call_between_autocast_layers_is_judged_at_float32(self):
        # Under autocast, a call on float32 tensors whose kernels met no half tensor (parity_torch's
        # kernels_in) computed in float32: judged at bfloat16's bound, a GELU 0.4% off passed, and a
        # SiLU module's too (recorded as parity's op, by its module, not watched). The GRU
        # cell, whose products ran in bfloat16 inside, keeps that bound (no false failure).
        torch.manual_seed(0)
        net, x = Float32Between().eval(), torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
        plain, mixed = self.dump("between-f32", net, x), self.dump("between-ac", net, x, below=bf16_autocast())
        for a, b in ((plain, mixed), (mixed, plain)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        for function, layer in (("gelu", "gelu"), ("silu", "act")):
            bad = self.dump(f"between-ac-bad-{function}", net, x, below=bf16_autocast(PlantedFloat32(function)))
            self.assert_named(plain, bad, layer, function + ": ")
            self.assert_named(mixed, bad, layer, function + ": ")
        # Against a bfloat16 model the pair is compared at bfloat16's tolerance: the side that
        # computed in float32 is still held to float32's (the SiLU 0.4% off passed there).
        first, y = SiluFirst().eval(), torch.randn(4, 16, generator=torch.Generator().manual_seed(1))
        half, mixed = self.dump("first-bf16", first, y, torch.bfloat16), self.dump("first-ac", first, y, below=bf16_autocast())
        for a, b in ((half, mixed), (mixed, half)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        self.assert_named(half, self.dump("first-ac-bad", first, y, below=bf16_autocast(PlantedFloat32("silu"))), "act")

    def test_autocast_entered_inside_forward_is_the_runs(self):
        # The run's autocast was read as each forward began: a region entered inside forward left
        # the run "autocast: off", and the GRU cell's bfloat16 products were judged at float32 (its
        # correct side named defective, exit 1). The GELU before the region is float32's, named
        # 0.4% off.
        torch.manual_seed(0)
        plain = AutocastInside(False).eval()
        inside = copy.deepcopy(plain)
        inside.enabled = True
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
        a, b = self.dump("inside-f32", plain, x), self.dump("inside-ac", inside, x)
        # autocast leaves float64 as it is: a float64 run of the same code is no autocast run
        wide = self.dump("inside-f64", inside, x, torch.float64)
        for first, second in ((a, b), (b, a), (a, wide), (wide, a), (b, wide), (wide, b)):
            code, out, report = compare(first, second)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        self.assert_named(a, self.dump("inside-ac-bad", inside, x, below=PlantedFloat32("gelu")), "gelu")

    def test_a_step_of_a_python_number_judged_with_the_number_as_the_kernel_rounds_it(self):
        # remainder(x, 0.3), fmod, floor_divide, div(rounding_mode='floor') and // of a bfloat16 model
        # against float32: the judge kept 0.3 exact where the kernel rounded it to bfloat16, and
        # named the correct bfloat16 side defective at every multiple (exit 1 on two correct runs).
        torch.manual_seed(0)
        net, x = StepsOfANumber(), torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
        plain, half, wide = self.dump("steps-f32", net, x), self.dump("steps-bf16", net, x, torch.bfloat16), self.dump("steps-f64", net, x, torch.float64)
        for a, b in ((plain, half), (half, plain), (plain, wide), (wide, plain)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        self.assert_named(plain, self.dump("steps-bf16-bad", net, x, torch.bfloat16, below=PlantedStep()), "remainder")
        self.assert_named(plain, self.dump("steps-bf16-bad-trunc", net, x, torch.bfloat16, below=PlantedStep(trunc=True)), "div.2")
        self.assert_named(plain, self.dump("steps-f64-bad-trunc", net, x, torch.float64, below=PlantedStep(trunc=True)), "div.2")

    def test_indices_of_a_float64_run_written_as_float32(self):
        # A float64 model with no parameters (NeRF's sampler), its cdf written as float32: the judge
        # re-ran searchsorted on the written cdf, where 1 + 2^-52 had become 1, and named the correct
        # float64 side defective (exit 1 on two correct runs, before). An index 3 off is still named.
        net, w = HierarchicalSampler(), torch.rand(64, 15, generator=torch.Generator().manual_seed(0))
        plain, wide = self.dump("cdf-f32", net, w), self.dump("cdf-f64", net, w, torch.float64)
        for a, b in ((plain, wide), (wide, plain)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        self.assert_named(plain, self.dump("cdf-f64-bad", net, w, torch.float64, below=PlantedIndex()), "searchsorted")
        self.assert_named(wide, self.dump("cdf-f32-bad", net, w, below=PlantedIndex()), "searchsorted")

    def test_a_graph_convolution_through_sparse_products(self):
        # The products of a sparse adjacency were not recorded: their dense results reached the
        # calls after them as data no layer produced, which a float64 run differs in (exit 1 on two
        # correct runs, no side named, and a defect after them hidden). They are now recorded on the
        # adjacency's dense values, whose producer a `to_sparse` keeps, and a sparse_coo_tensor of
        # computed weights is a layer whose output is its dense form.
        torch.manual_seed(0)
        net, x = GraphConvolution().eval(), torch.randn(20, 8, generator=torch.Generator().manual_seed(1))
        adjacency = normalised_adjacency()

        def call(dtype):
            return lambda m, v: m(v, adjacency, adjacency.to(dtype).to_sparse())
        plain, wide = self.dump("gcn-f32", net, x, call=call(torch.float32)), self.dump("gcn-f64", net, x, torch.float64, call=call(torch.float64))
        for a, b in ((plain, wide), (wide, plain)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        with open(os.path.join(plain, "manifest.json")) as f:
            ops = [l["op"] for l in json.load(f)["layers"]]
        self.assertEqual(ops.count("torch.mm"), 2, ops)  # torch.spmm, as torch's function mode sees it
        for op in ("torch._sparse_mm", "torch._sparse_addmm", "torch.Tensor.matmul", "torch.sparse_coo_tensor"):
            self.assertIn(op, ops)
        self.assert_named(plain, self.dump("gcn-f64-bad", net, x, torch.float64, call=call(torch.float64), below=PlantedProduct("mm", 16)), "mm")
        self.assert_named(plain, self.dump("gcn-f64-bad-w2", net, x, torch.float64, call=call(torch.float64), below=PlantedProduct("linear", 3)), "w2")
        self.assert_named(plain, self.dump("gcn-f64-bad-weight", net, x, torch.float64, call=call(torch.float64), below=PlantedProduct("sigmoid", 20, (5,))), "sigmoid")

    def test_a_box_edge_on_a_bin_edge_moves_the_bin_either_way(self):
        # A float64 box at 2.9999999999 is written as 3.0, where RoIPool's bin starts one pixel
        # over (round(1.5) against round(1.4999999999)): the judge, run again on the written box,
        # named the correct float64 side (23 of 48 elements), before the boxes were nudged down
        # as well as up. A wrong element is still named.
        torch.manual_seed(0)
        net, x = PooledBoxes().eval(), torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(1))
        boxes = torch.tensor([[0, 2.9999999999, 1.3, 12.7, 9.1], [0, 4.7, 3.0000000001, 8.9, 14.2], [0, 1.37, 2.71, 9.3, 11.1]],
                             dtype=torch.float64)
        plain = self.dump("roi-f32", net, x, call=lambda m, v: m(v, boxes.float()))
        wide = self.dump("roi-f64", net, x, torch.float64, call=lambda m, v: m(v, boxes))
        for a, b in ((plain, wide), (wide, plain)):
            code, out, report = compare(a, b)
            self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])
        bad = self.dump("roi-f64-bad", net, x, torch.float64, call=lambda m, v: m(v, boxes), below=PlantedProduct("roi_pool", 2, (2, 3, 0, 1)))
        self.assert_named(plain, bad, "pool")

    def test_memory_a_resize_leaves_is_not_compared(self):
        # CrossMapLRN2d resizes empty tensors of its own (x.new().resize_as_(x)) and fills them with
        # the calls after it: the resize's output was whatever memory held, compared (exit 1).
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.CrossMapLRN2d(5), torch.nn.ReLU()).eval()
        x = torch.randn(2, 3, 12, 12, generator=torch.Generator().manual_seed(0))
        plain = self.dump("lrn-f32", net, x)
        for other in (self.dump("lrn-f64", net, x, torch.float64), self.dump("lrn-bf16", net, x, torch.bfloat16)):
            for a, b in ((plain, other), (other, plain)):
                code, out, report = compare(a, b)
                self.assertEqual((code, report["failed"], report["unchecked"], report["structural"]), (0, 0, 0, 0), out[-3000:])

    def test_a_round_trip_through_bfloat16_is_the_consumers_input_not_the_producers(self):
        torch.manual_seed(0)
        net, x = RoundTrip(), torch.randn(2, 8, generator=torch.Generator().manual_seed(1))
        code, out, _ = compare(self.dump("trip-a", net, x), self.dump("trip-b", net, x, torch.float64))
        self.assertEqual(code, 0, out[-2000:])


def add_tests(names):
    for name in names:
        setattr(Zoo, f"test_{name}", lambda self, name=name: self.check_model(name))


if __name__ == "__main__":
    PARITY = support.parity_binary()
    add_tests(sys.argv[1:] or list(zoo.MODELS))
    unittest.main(argv=[sys.argv[0], "-v"])
