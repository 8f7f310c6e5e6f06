"""A zoo of small models of every family a user brings (torchvision's, torch.nn's recurrent layers,
hand-written ones), each built offline with random weights at a small size, and the ways to run
them: float32, float64 written as float32, bfloat16 weights, bfloat16 autocast (the CPU's stand-in
for a GPU's reduced precision). tests/python/zoo_test.py and scripts/gpu-torch-flow use it.

Each builder returns (model, input, call, defects): call(model, input) runs it as its users do (None:
model(input)), and defects lists (module path, call name or None, layer named) where a kernel plants
one wrong element: in the result of the module's first call of that name (of any call when None).
A view's result (a call whose result shares its input's memory: permute, chunk) is written in place,
a value written between two recorded layers; the layer named is the one that reads it.
"""
import contextlib
import copy

import torch
import torchvision
from torch.overrides import TorchFunctionMode

import parity_torch
from parity_torch.views import storage_ptr


def _seeded(shape, seed=1):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed))


def convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    torch.manual_seed(0)
    cfg = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)]
    return ConvNeXt(cfg, stochastic_depth_prob=0.0).eval(), _seeded((1, 3, 32, 32)), None, [
        ("features.1.0.block.3", None, "features.1.0.block.3"), ("features.1.0.block.1", "permute", "features.1.0.block.2")]


def swin():
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(0)
    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=[2, 2],
                        stochastic_depth_prob=0.0, num_classes=10)
    return m.eval(), _seeded((1, 3, 32, 32)), None, [("features.1.0.attn", "softmax", "features.1.0.attn.softmax"),
                                                     ("features.3.0.mlp.0", None, "features.3.0.mlp.0")]


def vit():
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10)
    return m.eval(), _seeded((1, 3, 32, 32)), None, [
        ("encoder.layers.encoder_layer_0.self_attention", "softmax", "encoder.layers.encoder_layer_0.self_attention.softmax"),
        ("encoder.layers.encoder_layer_1.mlp.0", None, "encoder.layers.encoder_layer_1.mlp.0")]


def mobilenet_v3():
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_small(weights=None, width_mult=0.25)
    return m.eval(), _seeded((1, 3, 64, 64)), None, [("features.2.block.1.0", None, "features.2.block.1.0"),
                                                     ("avgpool", None, "avgpool")]


def efficientnet():
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig
    torch.manual_seed(0)
    cfg = [MBConvConfig(1, 3, 1, 16, 16, 1, 0.5, 1.0), MBConvConfig(4, 3, 2, 16, 24, 1, 0.5, 1.0)]
    return EfficientNet(cfg, dropout=0.0, stochastic_depth_prob=0.0, num_classes=10).eval(), _seeded((1, 3, 32, 32)), None, [
        ("features.2.0.block.2.fc1", None, "features.2.0.block.2.fc1")]


def shufflenet():
    from torchvision.models.shufflenetv2 import ShuffleNetV2
    torch.manual_seed(0)
    m = ShuffleNetV2([1, 1, 1], [8, 16, 32, 64, 128], num_classes=10)
    return m.eval(), _seeded((1, 3, 64, 64)), None, [("stage2.0", "contiguous", "stage3.0.branch1.0")]


class Recurrent(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(16, 24, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(24, 4)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


def lstm():
    torch.manual_seed(0)
    return Recurrent(torch.nn.LSTM).eval(), torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1)), None, [
        ("rnn", "lstm", "rnn")]


def gru():
    torch.manual_seed(0)
    return Recurrent(torch.nn.GRU).eval(), torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1)), None, [
        ("rnn", "gru", "rnn")]


MODELS = {"convnext": convnext, "swin": swin, "vit": vit, "mobilenet_v3": mobilenet_v3, "efficientnet": efficientnet,
          "shufflenet": shufflenet, "lstm": lstm, "gru": gru}

# (label, dtype the model and its input are cast to, autocast dtype or None)
REGIMES = {"float32": (torch.float32, None), "float64": (torch.float64, None), "bf16": (torch.bfloat16, None),
           "bf16-autocast": (torch.float32, torch.bfloat16)}


class DefectiveKernel(TorchFunctionMode):
    """One element of the first floating tensor a call inside `module` returns (the first call of
    `name`, when given) off by `delta`: a kernel that computed one value wrong. Entered before
    parity_torch's dump, this mode sits below the recorder's, so the recorder takes the wrong value
    as the call's own result. Its hooks go on inside the dump block, after the recorder's."""

    def __init__(self, delta=0.25):
        super().__init__()
        self.armed, self.hooks, self.name, self.delta = False, [], None, delta

    def arm_in(self, module, name=None):
        self.name = name
        self.hooks = [module.register_forward_pre_hook(lambda *_: setattr(self, "armed", True)),
                      module.register_forward_hook(lambda *_: setattr(self, "armed", False))]

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if not self.armed or not (name != "__get__" if self.name is None else name == self.name):
            return result
        if isinstance(result, tuple) and result and torch.is_tensor(result[0]):  # lstm: (out, h, c)
            return (self._plant(result[0], args),) + tuple(result[1:])
        return self._plant(result, args) if torch.is_tensor(result) else result

    def _plant(self, result, args):
        if not result.is_floating_point():
            return result
        self.armed = False
        with torch._C.DisableTorchFunction():
            if not any(torch.is_tensor(a) and storage_ptr(a) == storage_ptr(result) for a in args):
                result = result.clone()  # a kernel's own output; a view is written in place
            result[tuple(_unravel(result.numel() // 3, result.shape))] += self.delta
        return result

    def __exit__(self, *exc):
        for h in self.hooks:
            h.remove()
        return super().__exit__(*exc)


def _unravel(i, shape):
    at = []
    for d in reversed(shape):
        at.append(i % d)
        i //= d
    return list(reversed(at))


def dump(path, built, regime, defect=None, device="cpu"):
    """Dumps one run of `built` (a builder's result) in `regime` (a REGIMES key), with the defect
    (an entry of the builder's defects) planted when given."""
    model, x, call, _ = built
    dtype, autocast = REGIMES[regime]
    m = copy.deepcopy(model).to(device=device, dtype=dtype)
    image = x.to(device=device, dtype=dtype if x.is_floating_point() else x.dtype)
    kernel = DefectiveKernel()
    mixed = torch.autocast(device, dtype=autocast) if autocast else contextlib.nullcontext()
    with torch.no_grad(), kernel, mixed, parity_torch.dump(path, m, dtype=torch.float32):
        if defect is not None:
            kernel.arm_in(dict(m.named_modules())[defect[0]], defect[1])
        (call or (lambda mm, xx: mm(xx)))(m, image)
    return path
