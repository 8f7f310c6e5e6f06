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


class CellLoop(torch.nn.Module):
    """Recurrent cells stepped by hand (torch.lstm_cell, gru_cell), as decoders and trackers write them."""

    def __init__(self):
        super().__init__()
        self.lstm, self.gru, self.head = torch.nn.LSTMCell(8, 16), torch.nn.GRUCell(16, 12), torch.nn.Linear(12, 3)

    def forward(self, x):
        h = c = torch.zeros(x.shape[0], 16, dtype=x.dtype, device=x.device)
        g = torch.zeros(x.shape[0], 12, dtype=x.dtype, device=x.device)
        for t in range(x.shape[1]):
            h, c = self.lstm(x[:, t], (h, c))
            g = self.gru(h, g)
        return self.head(g)


def cells():
    torch.manual_seed(0)
    return CellLoop().eval(), torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(1)), None, [
        ("lstm", "lstm_cell", "lstm"), ("gru", "gru_cell", "gru")]


class Packed(torch.nn.Module):
    """Sequences of several lengths packed for an LSTM, unpacked batch first: the head's Linear reads
    a transposed (strided) tensor, which ATen's bfloat16 CPU linear sums otherwise than a contiguous one."""

    def __init__(self):
        super().__init__()
        self.pre = torch.nn.Linear(8, 8)
        self.rnn = torch.nn.LSTM(8, 16, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(32, 3)

    def forward(self, x):
        packed = torch.nn.utils.rnn.pack_padded_sequence(self.pre(x), torch.tensor([5, 3, 2]), batch_first=True)
        y, _ = torch.nn.utils.rnn.pad_packed_sequence(self.rnn(packed)[0], batch_first=True)
        return self.head(y)


def packed():
    torch.manual_seed(0)
    return Packed().eval(), torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(1)), None, [
        ("", "_pack_padded_sequence", "pack_padded_sequence"), ("head", None, "head")]


class Scores(torch.nn.Module):
    """What classifiers and retrieval heads compute from logits and embeddings: log_softmax,
    logsumexp over several dims, cosine similarity, and a norm written as Python spells it."""

    def __init__(self):
        super().__init__()
        self.logits, self.embed = torch.nn.Linear(32, 64), torch.nn.Linear(32, 64)

    def forward(self, x):
        y, e = self.logits(x) * 300, self.embed(x)  # logits in the hundreds: their rounding moves log_softmax
        unit = e / e.norm(p="fro", dim=-1, keepdim=True)
        return (torch.nn.functional.log_softmax(y, dim=-1).sum() + torch.logsumexp(y, dim=(1, 2)).sum()
                + torch.nn.functional.cosine_similarity(y, e, dim=-1).sum() + unit.sum() + e.norm()
                + torch.linalg.vector_norm(e, 2, -1).sum() + e.norm(p=1, dim=-1).sum())  # ord and dim by position; a 1-norm


def scores():
    torch.manual_seed(0)
    return Scores().eval(), torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(1)), None, [
        ("", "log_softmax", "log_softmax"), ("", "logsumexp", "logsumexp"), ("", "cosine_similarity", "cosine_similarity"),
        ("", "norm", "norm"), ("", "linalg_vector_norm", "linalg_vector_norm")]


class Pools(torch.nn.Module):
    """Pools and resizes spelled as users spell them: an adaptive max pool to an int size,
    nearest-exact upsampling, and torch.linalg.norm."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)

    def forward(self, x):
        a = torch.nn.functional.adaptive_max_pool2d(self.conv(x), 5)
        b = torch.nn.Upsample(scale_factor=2, mode="nearest-exact")(a)
        return a.sum() + b.sum() + torch.linalg.norm(b, dim=-1).sum()


def pools():
    torch.manual_seed(0)
    return Pools().eval(), _seeded((1, 3, 17, 17)), None, [
        ("", "adaptive_max_pool2d", "adaptive_max_pool2d"), ("", "_upsample_nearest_exact2d", "upsample_nearest_exact2d"),
        ("", "linalg_norm", "linalg_norm")]


class CastBlock(torch.nn.Linear):
    """A linear that runs in bfloat16 whatever its model's dtype: it casts its input and weights."""

    def forward(self, x):
        y = torch.nn.functional.linear(x.to(torch.bfloat16), self.weight.to(torch.bfloat16), self.bias.to(torch.bfloat16))
        return y.to(x.dtype)


class Mixed(torch.nn.Module):
    """Mixed precision written by hand inside a float32 model: autocast entered in forward, and a
    block that casts its input and weights to bfloat16 itself."""

    def __init__(self):
        super().__init__()
        self.inp, self.auto, self.out = (torch.nn.Linear(32, 32) for _ in range(3))
        self.cast = CastBlock(32, 32)

    def forward(self, x):
        x = torch.relu(self.inp(x))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            x = torch.relu(self.auto(x)).float()
        return self.out(self.cast(x))


def mixed():
    torch.manual_seed(0)
    return Mixed().eval(), torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(1)), None, [
        ("auto", None, "auto"), ("cast", "linear", "cast"), ("out", None, "out")]


def deeplabv3():
    torch.manual_seed(0)
    m = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=3,
                                                                     aux_loss=False)
    return m.eval(), _seeded((1, 3, 64, 64)), lambda mm, x: mm(x)["out"], [
        ("classifier.0.convs.4", "adaptive_avg_pool2d", "classifier.0.convs.4.0"), ("classifier.4", None, "classifier.4")]


def lraspp():
    torch.manual_seed(0)
    m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=3)
    return m.eval(), _seeded((1, 3, 64, 64)), lambda mm, x: mm(x)["out"], [("classifier.scale", "sigmoid", "classifier.scale.2")]


def densenet():
    from torchvision.models.densenet import DenseNet
    torch.manual_seed(0)
    m = DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2, num_classes=10)
    return m.eval(), _seeded((1, 3, 32, 32)), None, [("features.denseblock1.denselayer2.conv2", None, "features.denseblock1.denselayer2.conv2")]


def googlenet():
    torch.manual_seed(0)
    m = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=False, num_classes=10)
    return m.eval(), _seeded((1, 3, 64, 64)), None, [("inception3b.branch3.1.conv", None, "inception3b.branch3.1.conv")]


def regnet():
    torch.manual_seed(0)
    m = torchvision.models.regnet_y_400mf(weights=None, num_classes=10)
    return m.eval(), _seeded((1, 3, 64, 64)), None, [("trunk_output.block2.block2-0.f.se.fc1", None, "trunk_output.block2.block2-0.f.se.fc1")]


class Video(torch.nn.Module):
    """A video classifier's layers: conv3d, BatchNorm3d, avg_pool3d, adaptive_avg_pool3d."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv3d(3, 8, (3, 3, 3), padding=1), torch.nn.BatchNorm3d(8), torch.nn.ReLU())
        self.pool = torch.nn.AvgPool3d(2)
        self.body = torch.nn.Conv3d(8, 16, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
        self.head = torch.nn.Linear(16, 5)

    def forward(self, x):
        x = self.body(self.pool(self.stem(x)))
        return self.head(torch.nn.functional.adaptive_avg_pool3d(x, 1).flatten(1))


def video():
    torch.manual_seed(0)
    return Video().eval(), _seeded((1, 3, 4, 16, 16)), None, [("body", None, "body"), ("pool", None, "pool")]


class UNet(torch.nn.Module):
    """A U-Net's layers: GroupNorm, max_pool2d, conv_transpose2d, a skip concatenated, bilinear upsampling."""

    def __init__(self):
        super().__init__()
        block = lambda i, o: torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.GroupNorm(4, o), torch.nn.SiLU())  # noqa: E731
        self.down1, self.down2 = block(3, 8), block(8, 16)
        self.up = torch.nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.fuse = block(16, 8)
        self.out = torch.nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.down1(x)
        b = self.down2(torch.nn.functional.max_pool2d(a, 2))
        y = self.fuse(torch.cat([a, self.up(b)], 1))
        return torch.nn.functional.interpolate(self.out(y), scale_factor=0.5, mode="bilinear", align_corners=False)


def unet():
    torch.manual_seed(0)
    return UNet().eval(), _seeded((1, 3, 32, 32)), None, [("up", None, "up"), ("down2.1", None, "down2.1")]


class Decoder(torch.nn.Module):
    """A GPT-style decoder, as nanoGPT writes one: embeddings, a causal mask, attention by hand,
    LayerNorm, GELU, and the last position taken with a list index (x[:, [-1], :])."""

    def __init__(self, vocab=50, width=32, heads=2, length=12):
        super().__init__()
        self.tok, self.pos = torch.nn.Embedding(vocab, width), torch.nn.Embedding(length, width)
        self.ln1, self.ln2, self.lnf = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.qkv, self.proj = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width))
        self.head = torch.nn.Linear(width, vocab, bias=False)
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(length, length)).view(1, 1, length, length))

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / k.shape[-1] ** 0.5)
        att = torch.nn.functional.softmax(att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, -1))
        x = x + self.mlp(self.ln2(x))
        return self.head(self.lnf(x)[:, [-1], :])


def decoder():
    torch.manual_seed(0)
    return Decoder().eval(), torch.randint(0, 50, (2, 12), generator=torch.Generator().manual_seed(1)), None, [
        ("proj", None, "proj"), ("mlp.1", None, "mlp.1")]


def _detection(model, size=128):
    return model.eval(), _seeded((3, size, size)), lambda mm, x: mm([x])


def faster_rcnn():
    torch.manual_seed(0)
    m = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=5, box_score_thresh=0.0, min_size=128, max_size=128,
        rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=50, box_detections_per_img=20)
    return _detection(m) + ([("backbone.body.3.block.1.0", None, "backbone.body.3.block.1.0")],)


def mask_rcnn():
    from torchvision.models.detection import MaskRCNN
    from torchvision.models.detection.backbone_utils import mobilenet_backbone
    torch.manual_seed(0)
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.ops import MultiScaleRoIAlign
    backbone = mobilenet_backbone(backbone_name="mobilenet_v3_small", weights=None, fpn=True, trainable_layers=6)
    anchors = AnchorGenerator(((16, 32, 64),) * 3, ((0.5, 1.0, 2.0),) * 3)
    m = MaskRCNN(backbone, num_classes=3, min_size=96, max_size=96, box_score_thresh=0.0, rpn_pre_nms_top_n_test=60,
                 rpn_post_nms_top_n_test=30, box_detections_per_img=8, rpn_anchor_generator=anchors,
                 box_roi_pool=MultiScaleRoIAlign(["0", "1"], 7, 2), mask_roi_pool=MultiScaleRoIAlign(["0", "1"], 14, 2))
    return _detection(m, 96) + ([("roi_heads.mask_head", "conv2d", "roi_heads.mask_head.0.0"),
                                 ("roi_heads.box_roi_pool", "roi_align", "roi_heads.box_roi_pool.roi_align")],)


def ssdlite():
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5,
                                                                   score_thresh=0.0, detections_per_img=20, topk_candidates=50)
    return _detection(m, 160) + ([("head.classification_head.module_list.0.1", None, "head.classification_head.module_list.0.1")],)


class Conv2dSame(torch.nn.Conv2d):
    """A convolution that pads as TensorFlow's SAME does, in its own forward (as timm's Conv2dSame in
    every tf_ EfficientNet): the module's padding attribute says 0, the call it makes is what counts."""

    def forward(self, x):
        pads = []
        for size, k, s, d in zip(x.shape[-2:], self.weight.shape[-2:], self.stride, self.dilation):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            pads = [total // 2, total - total // 2] + pads  # F.pad lists the last dimension first
        return torch.nn.functional.conv2d(torch.nn.functional.pad(x, pads), self.weight, self.bias, self.stride, 0,
                                          self.dilation, self.groups)


class SecondLibrary(torch.nn.Module):
    """The patterns of a second model library: a conv subclass that pads in its own forward, the
    positional avg_pool2d call nn.AvgPool2d makes, GroupNorm, Tensor.norm, a list index."""

    def __init__(self):
        super().__init__()
        self.stem = Conv2dSame(3, 8, 3, stride=2)
        self.norm = torch.nn.GroupNorm(2, 8)
        self.pool = torch.nn.AvgPool2d(3, 1, 1)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = self.pool(torch.nn.functional.silu(self.norm(self.stem(x))))
        y = y / y.norm(dim=1, keepdim=True).clamp_min(1e-6)
        return self.head(y.mean((2, 3))[:, [0, 2, 4, 6, 1, 3, 5, 7]])


def second_library():
    torch.manual_seed(0)
    return SecondLibrary().eval(), _seeded((2, 3, 17, 17)), None, [("stem", "conv2d", "stem"), ("pool", None, "pool"),
                                                                   ("norm", None, "norm")]


def yolov5():
    """tests/python/yolov5_style.py's YOLOv5n with val.py's non_max_suppression after it."""
    from yolov5_style import calibrated_yolov5n, non_max_suppression

    def call(m, image):
        pred = m(image)[0]
        with parity_torch.scope("nms"):
            non_max_suppression(pred.float())
    model, x = calibrated_yolov5n()
    return model, x, call, [("model.6.m.0.cv1.conv", None, "model.6.m.0.cv1.conv"), ("model.24", "sigmoid", "model.24.sigmoid")]


def raft():
    """torchvision's RAFT (small): correlation pyramid, grid_sample lookups, a recurrent update block."""
    torch.manual_seed(0)
    m = torchvision.models.optical_flow.raft_small(weights=None).eval()
    frames = _seeded((2, 3, 128, 128))  # torchvision 0.15 on refuses feature maps below 16 (128 px)
    return m, frames, lambda mm, x: mm(x[:1], x[1:], num_flow_updates=2), [
        ("", "grid_sampler", "grid_sampler"), ("update_block.motion_encoder.convflow1", None, "update_block.motion_encoder.convflow1.0")]


class Cancelling(torch.nn.Module):
    """Two large terms that cancel (box arithmetic does this: -269.75 + 265.11): a float64 run written
    as float32 records its inputs rounded, and the sum of the rounded inputs is off by more than the
    sum's own tolerance, though the run is correct."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Conv2d(2, 4, 1), torch.nn.Conv2d(2, 4, 1)
        with torch.no_grad():
            self.b.weight.copy_(self.a.weight * 1.00001)
            self.b.bias.copy_(self.a.bias)

    def forward(self, x):
        return self.a(x) * 1000 + (-(self.b(x) * 1000) + 0.001)


def cancelling():
    torch.manual_seed(0)
    return Cancelling().eval(), _seeded((1, 2, 8, 8)), None, [("b", None, "b"), ("", "add", "add")]


class Preprocess(torch.nn.Module):
    """What models do around their layers: inception_v3's transform_input (Python numbers rounded to
    the tensor's dtype by a bfloat16 run), F.normalize (SwinV2's cosine attention), a scatter of the
    top scores."""

    def __init__(self):
        super().__init__()
        self.conv, self.head = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Linear(8, 6)

    def forward(self, x):
        x = torch.cat([x[:, :1] * (0.229 / 0.5) + (0.485 - 0.5) / 0.5, x[:, 1:] * (0.224 / 0.5) + (0.456 - 0.5) / 0.5], 1)
        y = torch.nn.functional.normalize(self.conv(x).mean((2, 3)), dim=-1)
        scores = self.head(y)
        top = scores.topk(2, dim=-1)
        return torch.zeros_like(scores).scatter(-1, top.indices, top.values)


def preprocess():
    torch.manual_seed(0)
    return Preprocess().eval(), _seeded((2, 3, 16, 16)), None, [("", "mul", "mul"), ("", "scatter", "scatter")]


class Moments(torch.nn.Module):
    """Statistics models compute by hand (a normalisation of their own, a style or instance
    statistic): var, std, var_mean and std_mean over dims, unbiased or not, with correction=."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = self.conv(x) + 3.0
        v = y.var(dim=(2, 3), keepdim=True)
        s = torch.std(y, dim=1, unbiased=False)
        vm, m = torch.var_mean(y, dim=[2, 3], correction=0)
        sm, m2 = torch.std_mean(y, 3)
        return (y - y.mean((2, 3), keepdim=True)) / (v + 1e-5).sqrt() + s.unsqueeze(1) + (vm + m)[..., None, None] + sm.mean() + m2.mean()


def moments():
    torch.manual_seed(0)
    return Moments().eval(), _seeded((2, 3, 16, 16)), None, [("", "var", "var"), ("", "std_mean", "std_mean")]


class GlobalResponseNorm(torch.nn.Module):
    """ConvNeXt-V2's GRN (timm's GlobalResponseNorm) on [N, H, W, C]: the norm over H and W, which
    are not innermost in memory, so torch 1.13's bfloat16 CPU kernel rounds its partial sums to
    bfloat16 (6 units off at 256 terms, two correct runs)."""

    def __init__(self, channels):
        super().__init__()
        self.weight, self.bias = torch.nn.Parameter(torch.randn(channels) * 0.5), torch.nn.Parameter(torch.randn(channels) * 0.1)

    def forward(self, x):
        g = x.norm(p=2, dim=(1, 2), keepdim=True)
        n = g / (g.mean(dim=-1, keepdim=True) + 1e-6)
        return x + torch.addcmul(self.bias, self.weight, x * n)


class Grn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1, self.grn, self.fc2 = torch.nn.Linear(8, 64), GlobalResponseNorm(64), torch.nn.Linear(64, 8)

    def forward(self, x):
        y = self.fc1(self.conv(x).permute(0, 2, 3, 1))
        return self.fc2(self.grn(torch.nn.functional.gelu(y))).mean((1, 2))


def grn():
    torch.manual_seed(0)
    return Grn().eval(), _seeded((1, 3, 16, 16)), None, [("fc2", None, "fc2"), ("grn", "mul", "grn.mul")]


class MoreOps(torch.nn.Module):
    """Calls users' models make beyond the common layers: moves (unfold, repeat_interleave,
    channel_shuffle, index_copy_), element-wise maps (prelu, glu, selu, diff), sums (fold,
    scatter_add, addcmul with a negative value, nn.Bilinear) and NFNet's weight standardisation
    (batch_norm in training mode with no running statistics), and a value pasted through an index
    of four slices, and rows put by index_put_; the moves index_fill (by a Python number), take,
    put and narrow_copy."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.prelu, self.bil = torch.nn.PReLU(8, init=0.1), torch.nn.Bilinear(8, 8, 4)
        self.ws = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)

    def forward(self, x):
        f = torch.nn.functional
        y = self.conv(x)
        cols = f.unfold(y, 3, padding=1)
        flipped = torch.arange(8, device=x.device).flip(0)
        outs = [self.prelu(y), cols, f.fold(cols * 0.5, (8, 8), 3, padding=1), torch.repeat_interleave(y, 2, dim=1),
                f.channel_shuffle(y, 2), f.glu(y, 1), f.selu(y), torch.diff(y, dim=-1),
                torch.zeros_like(y).scatter_add(1, flipped.view(1, 8, 1, 1).expand_as(y), y), torch.addcmul(y, y, y, value=-0.5),
                torch.zeros_like(y).index_copy_(1, flipped, y), self.bil(y.mean((2, 3)), y.amax((2, 3)))]
        standardised = f.batch_norm(self.ws.weight.reshape(1, 8, -1), None, None, training=True, momentum=0.0, eps=1e-5)
        outs.append(f.conv2d(y, standardised.reshape_as(self.ws.weight), padding=1))
        pasted = torch.zeros_like(y)
        pasted[:, :, 1:, 1:] = y[:, :, 1:, 1:] * 2  # an index of four slices, 85 characters (MViTv2's)
        rows = torch.zeros(8, 64, dtype=y.dtype, device=y.device)
        rows.index_put_((flipped,), y.flatten(2)[0])
        outs += [pasted, rows]
        picks = torch.tensor([1, 4, 9, 30], device=x.device)
        outs += [y.index_fill(1, flipped[:3], 0.3), torch.take(y, picks), y.put(picks[:2], y[0, 0, 0, :2] * 3),
                 y.narrow_copy(2, 2, 4)]
        return sum(o.float().sum() for o in outs)


def more_ops():
    torch.manual_seed(0)
    return MoreOps().eval(), _seeded((1, 3, 8, 8)), None, [("prelu", None, "prelu"), ("", "fold", "fold"), ("", "scatter_add", "scatter_add"),
                                                         ("", "batch_norm", "batch_norm"), ("", "take", "take"), ("", "narrow_copy", "narrow_copy")]


class StacksAndProducts(torch.nn.Module):
    """Calls a second round of users' code made (2026-11-27): numpy-style stacks (hstack, vstack,
    column_stack, tile, take_along_dim), products of two operands (mv, dot, outer, tensordot,
    addmv), element-wise maps (logaddexp, atan, tan, asinh, log_sigmoid) and Python functions of
    torch.nn.functional opened into their calls (softmin, tanhshrink)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 16)

    def forward(self, x):
        f = torch.nn.functional
        h = self.a(x)  # [2, 6, 16]
        g = self.b(h)
        outs = [torch.hstack([h, g]), torch.vstack([h, g]), torch.column_stack([h[0], g[0]]), h.tile(1, 2, 1),
                torch.take_along_dim(h, g.argmax(-1, keepdim=True), -1), torch.mv(h[0], g[1, 0]), torch.dot(h[0, 0], g[1, 1]),
                torch.outer(h[0, 0], g[1, 0]), torch.tensordot(h, g, dims=([1, 2], [1, 2])), torch.addmv(g[1, :, 0], h[0], g[1, 0]),
                torch.logaddexp(h, g * 0.5), torch.atan(h) + torch.tan(g * 0.3), torch.asinh(h), f.logsigmoid(g), f.softmin(h, -1),
                f.tanhshrink(g)]
        return sum(o.float().sum() for o in outs)


def stacks_and_products():
    torch.manual_seed(0)
    return StacksAndProducts().eval(), _seeded((2, 6, 8)), None, [("", "hstack", "hstack"), ("", "tensordot", "tensordot"),
                                                               ("", "mv", "mv"), ("", "logaddexp", "logaddexp")]


class TransformersMasks(torch.nn.Module):
    """How Hugging Face transformers mask attention and guard divisions: numbers from
    torch.finfo(dtype) (BERT's extended mask times finfo.min, GPT-2's torch.where with a torch.full
    of finfo.min, masked_fill with it, a clamp at finfo.eps, and numbers derived from them: eps * 10,
    min / 2, resolution), each precision's own; and a scale read
    out of the run with .item() and passed back as a Python number (dynamic-scale code)."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.o = torch.nn.Linear(8, 16), torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        dt = self.q.weight.dtype
        pad = torch.ones(x.shape[:2], device=x.device)
        pad[0, :2] = 0
        extended = (1.0 - pad[:, None, :].to(dt)) * torch.finfo(dt).min
        w = self.q(x) @ self.k(x).transpose(1, 2)
        causal = torch.ones(6, 6, dtype=torch.bool, device=x.device).tril()
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=x.device))
        w = w.masked_fill(~causal, torch.finfo(w.dtype).min)
        h = torch.softmax(w + extended, -1) @ self.q(x)
        h = h / h.norm(dim=-1, keepdim=True).clamp(min=torch.finfo(h.dtype).eps)
        # and numbers derived from them: eps * 10 in a root's guard, min / 2, resolution
        h = h / torch.sqrt(h.pow(2).mean(-1, keepdim=True) + torch.finfo(h.dtype).eps * 10)
        h = h + torch.full_like(h, torch.finfo(h.dtype).min / 2).where(~causal[:, :1].expand(6, 16), h).clamp(min=-1)
        floor = h.abs().clamp(min=torch.finfo(h.dtype).resolution).log().mean()
        return self.o(h / h.abs().amax().item()) + floor


def transformers_masks():
    torch.manual_seed(0)
    return TransformersMasks().eval(), _seeded((2, 6, 8)), None, [("", "softmax", "softmax"), ("", "amax", "amax"), ("o", None, "o")]


class ComplexRotary(torch.nn.Module):
    """Meta's llama attention as written: rotary embeddings by complex numbers (view_as_complex of
    the float query and key, times freqs_cis made by torch.polar, view_as_real, type_as), then
    attention by hand; an FNO's spectral layer (rfft2, a complex einsum with complex weights,
    irfft2); and polar, conj, resolve_conj, angle, sgn and fftshift in the forward."""

    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wo = torch.nn.Linear(16, 16, bias=False), torch.nn.Linear(16, 16, bias=False), torch.nn.Linear(16, 16)
        f = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
        self.freqs_cis = torch.polar(torch.ones(12, 4), torch.outer(torch.arange(12).float(), f))  # an attribute, as llama's
        self.spectral = torch.randn(2, 2, 3, 3, dtype=torch.cfloat) * 0.3  # an attribute: Module.to(float) drops imaginary parts

    def rotate(self, x):
        c = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        freqs = self.freqs_cis.to(x.device)  # llama moves it at each call: an attribute is not moved with the model
        return torch.view_as_real(c * freqs[:x.shape[1], None, :]).flatten(3).type_as(x)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.rotate(self.wq(x).view(b, t, 2, 8)).transpose(1, 2)
        k = self.rotate(self.wk(x).view(b, t, 2, 8)).transpose(1, 2)
        w = torch.softmax(q @ k.transpose(2, 3) / 8 ** 0.5, -1)
        h = self.wo((w @ q).transpose(1, 2).reshape(b, t, 16))
        spectrum = torch.fft.rfft2(h.float().view(b, 2, 12, 8))
        mixed = torch.einsum("bixy,ioxy->boxy", spectrum[:, :, :3, :3], self.spectral.to(x.device))
        z = torch.polar(h.float().abs() + 1, h.float())  # and calls on complex values around them
        around = torch.angle(z.conj().resolve_conj()) + torch.fft.fftshift(torch.sgn(z), dim=-1).imag
        return h, torch.fft.irfft2(torch.nn.functional.pad(mixed, (0, 2, 0, 9)), s=(12, 8)), around


def complex_rotary():
    torch.manual_seed(0)
    return ComplexRotary().eval(), _seeded((2, 12, 16)), None, [("wq", None, "wq"), ("wo", None, "wo")]


class MoeRouter(torch.nn.Module):
    """A Mixtral-style mixture of experts: a router's softmax and top 2, the expert mask by
    F.one_hot, each expert run on its tokens (torch.where of the mask) and added back by index_add_;
    a load statistic by index_put_ with accumulate=True (repeated indices add up) and nanmean."""

    def __init__(self):
        super().__init__()
        self.inp, self.gate = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4, bias=False)
        self.w1 = torch.nn.ModuleList([torch.nn.Linear(16, 32, bias=False) for _ in range(4)])
        self.w2 = torch.nn.ModuleList([torch.nn.Linear(32, 16, bias=False) for _ in range(4)])

    def forward(self, x):
        f = torch.nn.functional
        h = self.inp(x).flatten(0, 1)
        w, sel = torch.topk(f.softmax(self.gate(h), dim=1, dtype=torch.float), 2, dim=-1)
        w = (w / w.sum(dim=-1, keepdim=True)).to(h.dtype)
        out = torch.zeros_like(h)
        mask = f.one_hot(sel, num_classes=4).permute(2, 1, 0)
        for e in range(4):
            idx, top = torch.where(mask[e])
            if top.shape[0]:
                out.index_add_(0, top, (self.w2[e](f.silu(self.w1[e](h[top]))) * w[top, idx, None]).to(h.dtype))
        load = torch.zeros(4, dtype=h.dtype, device=h.device).index_put_((sel.flatten(),), w.flatten(), accumulate=True)
        return out, load.nanmean()


def moe_router():
    torch.manual_seed(0)
    return MoeRouter().eval(), _seeded((2, 8, 8)), None, [("gate", None, "gate"), ("", "silu", "silu"), ("", "index_put_", "index_put")]


class SelectionsAndLosses(torch.nn.Module):
    """Calls beyond the layers: selections whose indices may pick among ties (median, kthvalue,
    nanmedian, cummax, cummin, argsort; on values rounded to quarters, so a half run ties often),
    products (prod, cumprod, cross, kron, addbmm, addr), maps near a zero of theirs (logit, lgamma,
    digamma, sinc, softshrink), rrelu in eval, tests and counts (isnan, any, count_nonzero,
    searchsorted), scatter_reduce by each reduction, embedding_bag, distances (cdist by matrix
    products, dist, pairwise_distance, renorm), stft and a window in the run's type, and the losses
    (l1, mse, smooth l1, huber, cross entropy, nll, binary cross entropy with and without logits,
    kl_div, and the margin and ranking losses, whose ±1 targets a one-unit nudge makes anything,
    and an adaptive softmax's).
    torch 1.13's CPU has no bfloat16 prod, cdist, mse_loss, embedding_bag, binary_cross_entropy or
    multi_margin_loss: those run in float32."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)
        self.bag = torch.nn.EmbeddingBag(10, 8, mode="mean")
        # Fills its target.new_empty cluster by cluster: the rows of the last cluster are memory
        # left as it was in the index_fill_ of the one before.
        self.adaptive = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [4, 8], div_value=2.0)

    def forward(self, x):
        f = torch.nn.functional
        h, g = self.a(x), self.b(x)  # [2, 6, 8]

        def bce(p, t):  # CUDA's autocast refuses binary_cross_entropy: users run it with autocast off, as PyTorch's error says
            with torch.autocast(x.device.type, enabled=False):
                return f.binary_cross_entropy(p, t)
        q = (h * 4).round() / 4  # ties
        idx = torch.arange(8, device=x.device).remainder(3).expand(2, 6, 8)
        labels = torch.arange(12, device=x.device) % 8
        outs = [torch.median(q, -1)[0], torch.median(h, 1)[1], torch.kthvalue(q, 3, -1)[0], torch.nanmedian(h, 1)[0],
                torch.cummax(q, 1)[0], torch.cummin(q, 1)[1], h.gather(-1, torch.argsort(q, -1)), torch.msort(h),
                torch.cumprod(g.sigmoid() + 0.5, -1), torch.prod(g.float().sigmoid() + 0.5, -1),
                torch.cross(h[..., :3], g[..., :3], dim=-1), torch.kron(h[0, :2], g[0, :2]),
                torch.addbmm(h[0, :, :6], h, g.transpose(1, 2)[:, :, :6]), torch.addr(h[0, :, :6], h[0, :, 0], g[0, 0, :6]),
                torch.logit(h.sigmoid() * 0.9 + 0.05), torch.lgamma(h.abs() + 0.5), torch.digamma(g.abs() + 0.5), torch.sinc(h),
                f.softshrink(h, 0.1), f.rrelu(h), torch.xlogy(h, g.abs() + 0.1), torch.hypot(h, g), torch.erfc(h),
                torch.isnan(h) | torch.isinf(g), (h > 0).any(-1), torch.count_nonzero(q > 0, -1),
                torch.searchsorted(torch.linspace(-1, 1, 5, dtype=h.dtype, device=x.device), h.contiguous()),
                torch.logcumsumexp(h, 1)]
        outs += [torch.zeros(2, 6, 3, dtype=h.dtype, device=x.device).scatter_reduce(2, idx, h, r, include_self=False)
                 for r in ("amax", "amin", "sum", "mean")]
        outs += [f.embedding_bag(torch.arange(6, device=x.device) % 10, self.bag.weight.float(), torch.tensor([0, 2], device=x.device),
                                 mode="mean") * h.float().mean(),
                 torch.cdist(h.float().reshape(12, 8).repeat(3, 1)[:30] + torch.arange(30, device=x.device).view(30, 1) * 0.01, g.float()[0]),
                 torch.dist(h, g), f.pairwise_distance(h, g), torch.renorm(h, 2, 0, 1.0),
                 torch.stft(h.float().reshape(2, 48), 16, hop_length=4, window=torch.hann_window(16, device=x.device),
                            return_complex=True).abs(), h * torch.hann_window(8, dtype=h.dtype, device=x.device)]
        outs += [f.l1_loss(h, g), f.mse_loss(h.float(), g.float()), f.smooth_l1_loss(h, g), f.huber_loss(h, g, reduction="none"),
                 f.cross_entropy(h.reshape(12, 8), labels), f.nll_loss(f.log_softmax(g.reshape(12, 8), -1), labels, reduction="sum"),
                 f.binary_cross_entropy_with_logits(h, g.sigmoid()), bce(h.float().sigmoid(), g.float().sigmoid()),
                 f.kl_div(f.log_softmax(h, -1), f.softmax(g, -1), reduction="batchmean")]
        sign = torch.where(g > 0, 1.0, -1.0).to(h.dtype)
        outs += [f.hinge_embedding_loss(h, sign), f.margin_ranking_loss(h, g, sign), f.soft_margin_loss(h, sign),
                 f.triplet_margin_loss(h[0], g[0], h[1]), f.cosine_embedding_loss(h[0], g[0], sign[0, :, 0]),
                 f.poisson_nll_loss(h, g.abs()), f.multi_margin_loss(h.float().reshape(12, 8), labels),
                 f.multilabel_soft_margin_loss(h.reshape(12, 8), (g.reshape(12, 8) > 0).to(h.dtype)),
                 f.gaussian_nll_loss(h, g, h.abs() + 0.1), self.adaptive(h.reshape(12, 8), labels.flip(0) + 4).output]
        return [o.float().sum() for o in outs]


def selections_and_losses():
    torch.manual_seed(0)
    return SelectionsAndLosses().eval(), _seeded((2, 6, 8)), None, [
        ("", "cumprod", "cumprod"), ("", "cross", "cross"), ("", "logit", "logit"), ("", "scatter_reduce", "scatter_reduce"),
        ("", "cross_entropy", "cross_entropy"), ("", "pairwise_distance", "pairwise_distance"), ("", "cdist", "cdist"),
        ("", "kl_div", "kl_div"), ("", "median", "median"), ("", "hinge_embedding_loss", "hinge_embedding_loss"),
        ("", "triplet_margin_loss", "triplet_margin_loss")]


class Resize(torch.nn.Module):
    """Linear, bilinear and bicubic resizing at sizes that are no power of 2: a half run on the CPU
    works out where to sample in its own type (PyTorch 1.13), a quarter pixel off at bfloat16; a
    float32 one in float32, 1e-4 of a pixel off when CrossViT resizes its 240-pixel image to 224."""

    def __init__(self):
        super().__init__()
        self.conv, self.lin = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Conv1d(8, 8, 1)

    def forward(self, x):
        f = torch.nn.functional
        y = self.conv(f.adaptive_avg_pool2d(f.interpolate(x, size=224, mode="bicubic", align_corners=False), 16))
        return (f.interpolate(y, scale_factor=2, mode="bilinear", align_corners=True).mean() +
                f.interpolate(y, size=(23, 29), mode="bilinear").mean() + f.interpolate(y, scale_factor=0.7, mode="bicubic").mean() +
                f.interpolate(self.lin(y.flatten(2)), scale_factor=1.5, mode="linear").mean())


def resize():
    torch.manual_seed(0)
    return Resize().eval(), _seeded((1, 3, 240, 240)), None, [("conv", None, "conv"), ("lin", None, "lin")]


class KvCache(torch.nn.Module):
    """A decoder's KV cache filled as LLM code fills it: copy_ into a slice of a registered buffer
    step by step, then torch.cat(..., out=buffer) and add_ into a slice of another: writes into
    storage no layer made, which the layers after read."""

    def __init__(self):
        super().__init__()
        self.qkv, self.out = torch.nn.Linear(16, 48), torch.nn.Linear(32, 4)
        for name, shape in (("keys", (2, 8, 16)), ("values", (2, 8, 16)), ("both", (2, 1, 32)), ("total", (2, 1, 32))):
            self.register_buffer(name, torch.zeros(shape))

    def forward(self, x):
        for t in range(x.shape[1]):
            q, k, v = self.qkv(x[:, t:t + 1]).split(16, -1)
            self.keys[:, t:t + 1].copy_(k)
            self.values[:, t:t + 1].copy_(v)
            y = torch.nn.functional.softmax(q @ self.keys[:, :t + 1].transpose(1, 2) / 4.0, -1) @ self.values[:, :t + 1]
        torch.cat([y, q], -1, out=self.both)
        self.total[:, :, :16].add_(y)
        return self.out(self.both + self.total)


def kv_cache():
    torch.manual_seed(0)
    return KvCache().eval(), _seeded((2, 4, 16)), None, [("", "copy_", "copy"), ("", "add_", "add"), ("", "softmax", "softmax")]


class Constants(torch.nn.Module):
    """Values a model makes as it runs: torch.tensor of a Python number (MultiScaleRoIAlign's
    scales), of a tiny one that guards a division, of a tuple, and an Embedding with max_norm,
    which renormalises its weight rows in place first."""

    def __init__(self):
        super().__init__()
        self.emb, self.lin = torch.nn.Embedding(10, 8, max_norm=1.0), torch.nn.Linear(8, 4)

    def forward(self, idx):
        e = self.emb(idx) * torch.tensor(0.25)
        # The scalars stay on the CPU (a 0-d tensor joins a CUDA one as a number); the row cannot.
        return self.lin(e / (e.abs() * 1e-7 + torch.tensor(1e-8))) + torch.tensor((0.5, 1.5, 2.5, 3.5), device=idx.device)


def constants():
    torch.manual_seed(0)
    idx = torch.randint(0, 10, (2, 5), generator=torch.Generator().manual_seed(1))
    return Constants().eval(), idx, None, [("", "tensor", "tensor"), ("lin", None, "lin")]


class Lrn(torch.nn.Module):
    """AlexNet's local response norm: a Python function of torch.nn.functional (pad, avg_pool3d,
    pow, div), opened so its calls are the layers."""

    def __init__(self):
        super().__init__()
        self.conv, self.lrn = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.LocalResponseNorm(3)

    def forward(self, x):
        return self.lrn(self.conv(x))


def lrn():
    torch.manual_seed(0)
    return Lrn().eval(), _seeded((1, 3, 8, 8)), None, [("lrn", "pow", "lrn.pow"), ("conv", None, "conv")]


class OffsetNorm(torch.nn.Module):
    """LayerNorm and GroupNorm of activations whose mean is large against their spread (Hiera's
    blocks): torch 1.13's bfloat16 CPU kernels normalise in bfloat16, each affine step rounded."""

    def __init__(self):
        super().__init__()
        self.fc1, self.ln, self.gn, self.fc2 = torch.nn.Linear(16, 64), torch.nn.LayerNorm(64), torch.nn.GroupNorm(4, 64), torch.nn.Linear(64, 8)
        with torch.no_grad():
            self.ln.weight.normal_(), self.ln.bias.normal_(), self.gn.weight.normal_(), self.gn.bias.normal_()

    def forward(self, x):
        h = self.fc1(x) + 4.0
        return self.fc2(self.ln(h) + self.gn(h.transpose(1, 2)).transpose(1, 2))


def offset_norm():
    torch.manual_seed(0)
    return OffsetNorm().eval(), _seeded((2, 196, 16)), None, [("fc2", None, "fc2"), ("fc1", None, "fc1")]


class FlatResize(torch.nn.Module):
    """A bicubic resize of an image of two flat halves: where all 16 taps are equal, a bfloat16
    CPU run's error is a unit, whatever the edge between the halves allows elsewhere."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 1)

    def forward(self, x):
        return torch.nn.functional.interpolate(self.conv(x), scale_factor=2.3, mode="bicubic").sum((2, 3))


def flat_resize():
    torch.manual_seed(0)
    image = torch.zeros(1, 1, 16, 16)
    image[..., 8:] = 1.0
    return FlatResize().eval(), image, None, [("", "upsample_bicubic2d", "upsample_bicubic2d")]


class Antialias(torch.nn.Module):
    """Antialiased shrinking (F.interpolate(..., antialias=True), as torchvision's Resize does on
    tensors): filters as wide as the scale. PyTorch 1.13 runs it in float32 and float64 only."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        f, y = torch.nn.functional, self.conv(x)
        return (f.interpolate(y, size=(13, 11), mode="bilinear", antialias=True).sum((2, 3))
                + f.interpolate(y, size=(9, 14), mode="bicubic", antialias=True).sum((2, 3)))


def antialias():
    torch.manual_seed(0)
    return Antialias().eval(), _seeded((1, 3, 40, 40)), None, [("", "_upsample_bilinear2d_aa", "upsample_bilinear2d_aa"),
                                                              ("", "_upsample_bicubic2d_aa", "upsample_bicubic2d_aa")]


class PointCloud(torch.nn.Module):
    """PointNet++'s and DGCNN's grouping: each centre's nearest points by torch.cdist and topk, at
    a LiDAR scene's coordinates (around 50), their offsets through a shared MLP, max-pooled. CPU
    autocast runs cdist in float32."""

    def __init__(self):
        super().__init__()
        self.mlp = torch.nn.Linear(3, 8)

    def forward(self, xyz):
        d = torch.cdist(xyz[:, :16], xyz)  # 16 centres against 64 points
        dist, idx = torch.topk(d, 8, dim=-1, largest=False)
        near = torch.gather(xyz[:, None].expand(-1, 16, -1, -1), 2, idx[..., None].expand(-1, -1, -1, 3))
        return self.mlp(near - xyz[:, :16, None]).amax(2).sum() + dist.sum()


def point_cloud():
    torch.manual_seed(0)
    return PointCloud().eval(), torch.randn(2, 64, 3, generator=torch.Generator().manual_seed(1)) + 50.0, None, [
        ("", "cdist", "cdist"), ("mlp", None, "mlp")]


class RawImage(torch.nn.Module):
    """An image as a camera gives it (whole numbers 0..255 as floats) resized to a size no multiple of
    its own and warped by a predicted flow (grid_sample), before any normalisation: float32 places
    the samples a little off, and neighbours 255 apart move the result by that."""

    def __init__(self):
        super().__init__()
        self.flow = torch.nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, image):
        f = torch.nn.functional
        resized = f.interpolate(image, size=(45, 37), mode="bilinear", align_corners=False)
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, 32, dtype=image.dtype), torch.linspace(-1, 1, 32, dtype=image.dtype), indexing="ij")
        grid = torch.stack((xs, ys), -1)[None] + self.flow(image / 255).permute(0, 2, 3, 1) * 0.05
        warped = f.grid_sample(image, grid, mode="bilinear", padding_mode="border", align_corners=True)
        return resized.mean((2, 3)) + warped.mean((2, 3))


def raw_image():
    torch.manual_seed(0)
    image = torch.randint(0, 256, (1, 3, 32, 32), generator=torch.Generator().manual_seed(1)).float()
    return RawImage().eval(), image, None, [("", "upsample_bilinear2d", "upsample_bilinear2d"), ("", "grid_sampler", "grid_sampler")]


class SpatialTransformer(torch.nn.Module):
    """PyTorch's spatial transformer tutorial (MNIST-sized): a small network regresses an affine
    theta, F.affine_grid makes a sampling grid of it (the base grid's coordinates of both signs),
    F.grid_sample warps the image, and a classifier reads the warped image."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.localization = nn.Sequential(nn.Conv2d(1, 8, 7), nn.MaxPool2d(2, 2), nn.ReLU(True), nn.Conv2d(8, 10, 5), nn.MaxPool2d(2, 2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(90, 32), nn.ReLU(True), nn.Linear(32, 6))
        with torch.no_grad():
            self.fc_loc[2].weight.normal_(0, 0.05)
            self.fc_loc[2].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))
        self.conv, self.fc = nn.Conv2d(1, 10, 5), nn.Linear(1440, 10)

    def forward(self, x):
        f = torch.nn.functional
        theta = self.fc_loc(self.localization(x).flatten(1)).view(-1, 2, 3)
        grid = f.affine_grid(theta, x.size(), align_corners=False)
        warped = f.grid_sample(x, grid, align_corners=False)
        return f.log_softmax(self.fc(f.relu(f.max_pool2d(self.conv(warped), 2)).flatten(1)), 1)


def spatial_transformer():
    torch.manual_seed(0)
    return SpatialTransformer().eval(), torch.rand(4, 1, 28, 28, generator=torch.Generator().manual_seed(1)), None, [
        ("", "affine_grid", "affine_grid"), ("fc_loc", None, "fc_loc.0")]


class DetectionOps(torch.nn.Module):
    """torchvision's ops a detector's head calls beyond roi_align: a deformable convolution
    (DCN's offsets from a conv), RoIPool (Fast R-CNN's), and R-FCN's position-sensitive
    PSRoIAlign and PSRoIPool, on boxes computed from the features (no whole numbers)."""

    def __init__(self):
        super().__init__()
        ops = torchvision.ops
        self.conv, self.offsets = torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.Conv2d(32, 18, 3, padding=1)
        self.dcn = ops.DeformConv2d(32, 32, 3, padding=1)
        self.rp, self.psr, self.psp = ops.RoIPool((3, 3), 0.5), ops.PSRoIAlign((2, 2), 0.5, 2), ops.PSRoIPool((4, 4), 0.5)

    def forward(self, x):
        y = self.conv(x * 100)
        z = self.dcn(y, self.offsets(y) * 0.037)
        base = torch.tensor([[0, 1.0, 1.0, 20.0, 18.0], [0, 3.0, 2.0, 12.0, 30.0], [0, 0.3, 7.1, 60.0, 61.7]], dtype=x.dtype, device=x.device)
        shift = torch.sigmoid(y[0, :4, 5, 5]).expand(3, 4) * 3.3
        boxes = torch.cat([base[:, :1], base[:, 1:] + shift], 1)
        return z.mean((2, 3)).sum() + self.rp(z, boxes).sum() + self.psr(z, boxes).sum() + self.psp(z, boxes).sum()


def detection_ops():
    torch.manual_seed(0)
    return DetectionOps().eval(), _seeded((1, 3, 32, 32)), None, [
        ("dcn", "deform_conv2d", "dcn"), ("rp", "roi_pool", "rp"), ("psr", "ps_roi_align", "psr"), ("psp", "ps_roi_pool", "psp")]


class PoolIndices(torch.nn.Module):
    """SegNet's decoder (a max pool's indices into a max unpool), an LP pool, each as its torch.nn
    module calls it, a functional max pool with its indices and no stride (None, the kernel's size),
    and torch.unique of the indices with their inverse and counts."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Conv2d(8, 8, 3, padding=1)
        self.pool, self.unpool = torch.nn.MaxPool2d(2, return_indices=True), torch.nn.MaxUnpool2d(2)
        self.lp, self.pool1d = torch.nn.LPPool2d(2, 2), torch.nn.AdaptiveMaxPool1d(5, return_indices=True)

    def forward(self, x):
        y = self.conv1(x)
        p, where = self.pool(y)
        up = self.unpool(self.conv2(p), where, output_size=y.shape)
        flat, _ = self.pool1d(y.flatten(2))
        _, inverse, counts = torch.unique(where % 7, return_inverse=True, return_counts=True)
        wide, _ = torch.nn.functional.max_pool2d(y, 3, return_indices=True)
        return up.sum((2, 3)) + self.lp(y.relu()).sum((2, 3)) + flat.sum(2) + wide.sum((2, 3)) + (counts.sum() + inverse.sum()).float()


def pool_indices():
    torch.manual_seed(0)
    return PoolIndices().eval(), _seeded((1, 3, 12, 12)), None, [
        ("pool", None, "pool"), ("unpool", None, "unpool"), ("lp", "avg_pool2d", "lp.avg_pool2d"), ("pool1d", None, "pool1d")]


MODELS = {"convnext": convnext, "swin": swin, "vit": vit, "mobilenet_v3": mobilenet_v3, "efficientnet": efficientnet,
          "shufflenet": shufflenet, "lstm": lstm, "gru": gru, "cells": cells, "packed": packed, "scores": scores, "pools": pools, "mixed": mixed, "deeplabv3": deeplabv3, "lraspp": lraspp,
          "densenet": densenet, "googlenet": googlenet, "regnet": regnet, "video": video, "unet": unet, "decoder": decoder,
          "faster_rcnn": faster_rcnn, "mask_rcnn": mask_rcnn, "ssdlite": ssdlite, "second_library": second_library,
          "yolov5": yolov5, "raft": raft, "cancelling": cancelling,
          "preprocess": preprocess, "moments": moments, "grn": grn, "more_ops": more_ops,
          "stacks_and_products": stacks_and_products, "transformers_masks": transformers_masks, "complex_rotary": complex_rotary, "moe_router": moe_router, "selections_and_losses": selections_and_losses, "resize": resize, "kv_cache": kv_cache, "constants": constants,
          "lrn": lrn, "offset_norm": offset_norm,
          "flat_resize": flat_resize, "antialias": antialias, "point_cloud": point_cloud,
          "pool_indices": pool_indices, "raw_image": raw_image, "spatial_transformer": spatial_transformer, "detection_ops": detection_ops}

# The run a model's defects are planted in where it is not the first of bf16, bf16-autocast and
# float64 that PyTorch runs here: point_cloud's distances in bfloat16 cancel to noise at coordinates
# around 50 (its bound allows that), where autocast computes them in float32; raw_image's float32
# resize inside bfloat16 autocast is judged as a bfloat16 CPU kernel (samples placed in the type),
# whose allowance on neighbours 255 apart is wider than the defect.
DEFECT_REGIMES = {"point_cloud": "bf16-autocast", "raw_image": "float64"}

# (label, dtype the model and its input are cast to, autocast dtype or None)
REGIMES = {"float32": (torch.float32, None), "float64": (torch.float64, None), "bf16": (torch.bfloat16, None),
           "bf16-autocast": (torch.float32, torch.bfloat16)}


# Calls that compute nothing, among them parity_torch's own reads of the tensors it records: a defect
# planted in "any call" skips them.
_NOT_COMPUTED = parity_torch.torch_calls.NOT_LAYERS | {"__get__", "detach", "clone", "cpu", "to", "contiguous"}


class DefectiveKernel(TorchFunctionMode):
    """One element of the first floating tensor a call inside `module` returns (the first call of
    `name`, when given) off by `delta` (times the value, when larger than 1): a kernel that computed
    one value wrong. Entered before
    parity_torch's dump, this mode sits below the recorder's, so the recorder takes the wrong value
    as the call's own result. Its hooks go on inside the dump block, after the recorder's."""

    def __init__(self, delta=0.25):
        super().__init__()
        self.armed, self.hooks, self.name, self.delta, self.planted = False, [], None, delta, False

    def arm_in(self, module, name=None):
        self.name = name
        self.hooks = [module.register_forward_pre_hook(lambda *_: setattr(self, "armed", True)),
                      module.register_forward_hook(lambda *_: setattr(self, "armed", False))]

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if not self.armed or not (name not in _NOT_COMPUTED if self.name is None else name == self.name):
            return result
        if isinstance(result, tuple) and result and torch.is_tensor(result[0]):  # lstm: (out, h, c)
            return (self._plant(result[0], args),) + tuple(result[1:])
        return self._plant(result, args) if torch.is_tensor(result) else result

    def _plant(self, result, args):
        if not result.is_floating_point():
            return result
        self.armed, self.planted = False, True
        with torch._C.DisableTorchFunction():
            if not any(torch.is_tensor(a) and storage_ptr(a) == storage_ptr(result) for a in args):
                result = result.clone()  # a kernel's own output; a view is written in place
            at = tuple(_unravel(result.numel() // 3, result.shape))
            result[at] += self.delta * max(1.0, abs(float(result[at])))  # beyond bfloat16's rounding at any size
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
    run = call or (lambda mm, xx: mm(xx))
    mixed = lambda: torch.autocast(device, dtype=autocast) if autocast else contextlib.nullcontext()  # noqa: E731
    try:
        with torch.no_grad(), kernel, mixed(), parity_torch.dump(path, m, dtype=torch.float32):
            if defect is not None:
                kernel.arm_in(dict(m.named_modules())[defect[0]], defect[1])
            run(m, image)
        if defect is not None and not kernel.planted:  # a defect that names no call the module makes tests nothing
            raise ValueError(f"defect {defect}: no call {defect[1] or '(any)'} returned a float inside {defect[0] or 'the model'}")
    except RuntimeError as e:
        try:  # PyTorch itself, without parity_torch: its CPU kernels lack some ops in some dtypes
            with torch.no_grad(), mixed():
                run(copy.deepcopy(model).to(device=device, dtype=dtype), image)
        except RuntimeError:
            raise NotRunHere(f"PyTorch {torch.__version__} does not run it here: {str(e)[:120]}") from e
        raise
    return path


class NotRunHere(Exception):
    """The regime is one PyTorch itself cannot run this model in on this machine."""
