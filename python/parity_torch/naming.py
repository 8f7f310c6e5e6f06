"""How recorded layers are named: by module path, `<module>.<op>` for the calls made inside a module
call (`.1`, `.2` for later ones in that call), the module's own path for the call whose output the
module returns, and `<path>:<k>` for a module called again in one forward."""


def short_name(name):
    """A call's name as a layer's label and file names write it (`add_` and `__add__`: add, `+=`:
    iadd, `x[i]`: getitem)."""
    return name.strip("_") or "call"


class Frame:
    """One module call in progress: its path, and the function layers named inside it."""

    def __init__(self, path, layer=None, module=None):
        self.path, self.layer, self.module, self.named, self.counts = path, layer, module, [], {}
        self.inputs = []  # a recorded leaf's tensor arguments and their versions as it began


class Layer:
    def __init__(self, index, op, line, frame, short):
        self.index, self.op, self.line, self.frame, self.short = index, op, line, frame, short
        self.occurrence = 0
        self.name = None  # decided when the enclosing module call ends
        self.inputs, self.outputs, self.time_ms = [], [], 0.0
        self.kernels_in = None  # under autocast: the type the kernels inside computed in (kernel_types.py)


class Names:
    """The model's module paths, the module calls in progress (`stack`, under `root`: the calls made
    outside any module of one forward call), and every layer recorded so far, in order.
    `producer(t)`: the layer whose output the live tensor t is, or None."""

    def __init__(self, model, producer):
        self.paths = {m: p for p, m in model.named_modules()}
        self.leaves = {m for m in self.paths if next(m.children(), None) is None}
        self.producer = producer
        self.layers = []
        self.stack, self.root = [], Frame("")
        self.path_calls = {}  # module path -> its calls so far in this forward

    def frame(self):
        return self.stack[-1] if self.stack else self.root

    def new_layer(self, op, line, frame, short):
        layer = Layer(len(self.layers), op, line, frame, short)
        if frame.layer is None:  # a function call: named within its module call
            layer.occurrence = frame.counts.get(short, 0)
            frame.counts[short] = layer.occurrence + 1
            frame.named.append(layer)
        self.layers.append(layer)
        return layer

    def new_forward(self):
        """The model's next forward call begins: the previous call's post-processing is named, and
        the module calls are counted afresh."""
        self.name_function_layers(self.root)
        self.root = Frame("")
        self.path_calls = {}

    def call_path(self, module):
        """The path this call of the module is named by. A module called again in one forward (SPPF's
        pool, three times) is `<path>:1`, `<path>:2`, as parity names the later calls of one module."""
        path = self.path_of(module)
        again = self.path_calls.get(path, 0)
        self.path_calls[path] = again + 1
        return path if again == 0 else f"{path}:{again}"

    def path_of(self, module):
        """The module's path in this call: under the calling module's attribute that holds it. A
        module held by many parents (YOLOv5's one SiLU for every Conv, which named_modules lists
        once, as model.0.act) is then named where it runs: model.2.cv1.act."""
        parent = self.stack[-1] if self.stack else None
        if parent is not None and parent.module is not None:
            for name, child in parent.module._modules.items():
                if child is module:
                    return f"{parent.path}.{name}" if parent.path else name
        return self.paths[module]

    def open_scope(self, name):
        """parity_torch.scope(name): the calls made inside are named `<name>.<op>`."""
        frame = Frame(name)
        self.stack.append(frame)
        return frame

    def close_scope(self, frame):
        if frame in self.stack:
            self.stack.remove(frame)
        self.name_function_layers(frame)

    def name_function_layers(self, frame, returned=()):
        """`<module>.<op>` (`.1`, `.2` for later ones in the call), except the layer whose output the
        module returns: it is the module's own output and takes the module's path, as parity names
        YOLOv5's Concat (model.12), a Bottleneck's add (model.2.m.0) and Detect's cat (model.24),
        while a C3's inner cat stays model.2.cat."""
        own = None
        if frame.path and frame.module is not None:
            for t in returned:
                layer = self.producer(t)
                if layer is not None and any(layer is l for l in frame.named):
                    own = layer
                    break
        for layer in frame.named:
            if layer is own:
                layer.name = frame.path
                continue
            base = f"{frame.path}.{layer.short}" if frame.path else layer.short
            layer.name = base if layer.occurrence == 0 else f"{base}.{layer.occurrence}"
