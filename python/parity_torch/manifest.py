"""The manifest a finished dump ends with (docs/MANIFEST.md): the run's fields, saying how it computed
(dtypes, autocast, TF32) for `parity compare --precision auto`, and one entry per kept layer."""
import torch

from .views import dtype_name

VERSION = "0.1.0"


def autocast_now():
    """The autocast regions in force now, as "cuda:float16" or "cpu:bfloat16"."""
    found = set()
    for device in ("cuda", "cpu"):
        try:
            on, dtype = torch.is_autocast_enabled(device), torch.get_autocast_dtype(device)
        except (TypeError, AttributeError):  # torch before 2.4 asks each device its own way
            if device == "cuda":
                on, dtype = torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()
            else:
                on, dtype = torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
        if on:
            found.add(f"{device}:{str(dtype).replace('torch.', '')}")
    return found


def autocast_met(tensors, regions):
    """The autocast `regions` in force (autocast_now's) that a call on `tensors` meets: those of a
    device one of its float tensors is on, other than float64, which autocast leaves as it is (a
    float64 model under autocast computes in float64)."""
    if not regions:
        return regions
    devices = {t.device.type for t in tensors if t.is_floating_point() and t.dtype != torch.float64}
    return {r for r in regions if r.split(":")[0] in devices}


def build(name, model, kept, ran, devices, autocast, tf32, skipped, narrowed=()):
    """The manifest of the layers `kept` (naming.Layer, with their entries), recorded over the
    forward calls `ran` of `model` on `devices`, with `autocast` regions seen and the `tf32`
    switches (cuDNN, matmul) as the block began; `skipped`: (op, layer) -> calls not recorded;
    `narrowed`: the float dtypes the run held that the dump wrote narrower."""
    manifest = {
        "format": "parity-dump", "version": 1, "model": name, "backend": "pytorch",
        "device": device_text(devices), "tool_version": f"parity_torch {VERSION}",
        "run": {"model": name, "framework": "pytorch", "torch": torch.__version__,
                "calls": ",".join(str(c) for c in ran), "param_dtypes": param_dtypes(model),
                "precision": precision(model, devices, autocast, tf32), "autocast": ",".join(sorted(autocast)) or "off",
                "tf32": "cudnn={} matmul={}".format(*tf32)},
        "layers": [layer_json(i, l, bool(autocast)) for i, l in enumerate(kept)],
    }
    if narrowed:  # a float64 run written as float32 (its recorded inputs are its own, rounded), with or without parameters
        manifest["run"]["written_from"] = ",".join(sorted(narrowed))
    if skipped:  # a free-text run key: compare prints it where the two dumps differ
        manifest["run"]["skipped"] = skipped_text(skipped)
    return manifest


def skipped_text(skipped):
    calls = ", ".join(f"{op}{f' x{n}' if n > 1 else ''} (layer {layer})" for (op, layer), n in skipped.items())
    return f"skipped {sum(skipped.values())} calls with sparse/complex32 tensors: {calls}"


def layer_json(i, l, autocast):
    """Layer l's entry; its kernels_in only for a run that saw `autocast`, the one whose layers the
    judge reads it for."""
    def tensor(t):
        out = {"role": t["role"], "file": t["file"], "dtype": t["dtype"], "shape": t["shape"]}
        p = t.get("source")
        out["source"] = f"{p.layer.name}:{p.role}" if p is not None and p.layer.name else None
        also = [] if out["source"] is None else [f"{layer.name}:{role}" for layer, role in p.also_from if layer.name]
        also = list(dict.fromkeys(a for a in also if a != out["source"]))
        if also:  # where a partial write into its storage did not reach, the values of these
            out["also_from"] = also[:1] + also[1:][-63:]  # the tensor's own producer, and the latest writes
        if t.get("to_python"):
            out["to_python"] = True
        if t.get("strided"):
            out["strided"] = True
        if t.get("cast_from"):
            out["cast_from"] = t["cast_from"]
        if t.get("derived"):
            out["derived"] = True
            if t.get("via") is not None:
                out["via"] = t["via"]
        return out
    out = {"index": i, "name": l.name, "op": l.op, "params": l.line, "time_ms": round(l.time_ms, 4),
           "inputs": [tensor(t) for t in l.inputs], "outputs": [tensor(t) for t in l.outputs]}
    if l.kernels_in and autocast:
        out["kernels_in"] = l.kernels_in
    return out


def device_text(devices):
    names = []
    for d in sorted(devices):
        if d.startswith("cuda"):
            names.append(f"{d} ({torch.cuda.get_device_name(torch.device(d))})")
        else:
            names.append(d)
    return ", ".join(names) or "cpu"


def precision(model, devices, autocast, tf32):
    """What the run computed in, for `parity compare --precision auto`: fp16 or bf16 where the
    weights are, or autocast on a device the run used casts to, that dtype; else tf32 where a
    CUDA device that has TF32 (compute capability 8 and up) ran with it allowed (PyTorch allows
    it in cuDNN convolutions by default); else fp32."""
    dtypes = {p.dtype for p in model.parameters()}
    used = {d.split(":")[0] for d in devices}
    autocast = {a.split(":")[1] for a in autocast if a.split(":")[0] in used}
    if torch.float16 in dtypes or "float16" in autocast:
        return "fp16"
    if torch.bfloat16 in dtypes or "bfloat16" in autocast:
        return "bf16"
    cuda = [d for d in devices if d.startswith("cuda")]
    if cuda and any(tf32) and any(torch.cuda.get_device_capability(torch.device(d))[0] >= 8 for d in cuda):
        return "tf32"
    return "fp32"


def param_dtypes(model):
    return ",".join(sorted({dtype_name(p.dtype) for p in model.parameters()})) or "none"
