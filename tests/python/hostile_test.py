"""Nothing a dump folder or a model can do breaks parity_torch (issue #42, the Python half).

Run by ctest (label python) as: /usr/bin/python3 tests/python/hostile_test.py <parity binary>.
Exit 77 (ctest: skipped) when /usr/bin/python3 has no torch. Each test fails without its fix:
links planted in the folder, force=True on a user's own files, blocks closed out of order, a
model run from another thread, sparse and complex tensors, a full disk, calls never met, a parity
that does not finish, and messages in parity_torch's own words.
"""
import contextlib
import gc
import io
import json
import os
import signal
import subprocess
import tempfile
import textwrap
import threading
import time
import unittest
from unittest import mock

import support
from support import ROOT

np, torch = support.require("numpy", "torch")

import parity_torch  # noqa: E402

PARITY = None
GETITEM = torch.Tensor.__getitem__  # TensorBase's, before any block patched it


class Net(torch.nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, width, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return y[y > 0.1]  # boolean indexing: through the patched Tensor.__getitem__


def manifest(path):
    with open(os.path.join(path, "manifest.json")) as f:
        return json.load(f)


def listed(path):
    return {t["file"] for l in manifest(path)["layers"] for t in l["inputs"] + l["outputs"]}


def stderr_of(fn):
    """What fn printed on stderr, and its result."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        result = fn()
    return buf.getvalue(), result


class Hostile(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        torch.manual_seed(0)
        self.model = Net().eval()
        self.x = torch.randn(1, 3, 8, 8)

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def dump(self, name, model=None, **kw):
        model = model or self.model
        with torch.no_grad(), parity_torch.dump(self.path(name), model, **kw):
            model(self.x)
        return self.path(name)

    def victim(self):
        v = self.path("victim.txt")
        with open(v, "w") as f:
            f.write("mine")
        return v

    def assertUntouched(self, victim):
        with open(victim) as f:
            self.assertEqual(f.read(), "mine")

    def assertParityPrefix(self, e):
        self.assertTrue(str(e).startswith("parity_torch: "), str(e))

    # 1. Files are created exclusively, never through a link.
    def test_a_link_planted_as_the_manifest_temporary_is_not_followed(self):
        victim, path = self.victim(), self.path("d")
        with torch.no_grad(), parity_torch.dump(path, self.model):
            self.model(self.x)
            os.symlink(victim, os.path.join(path, "manifest.json.tmp"))
        self.assertUntouched(victim)
        self.assertFalse(os.path.islink(os.path.join(path, "manifest.json")))
        self.assertEqual(manifest(path)["format"], "parity-dump")

    def test_a_link_planted_as_a_tensor_file_is_refused_not_followed(self):
        names = sorted(listed(self.dump("first")))
        victim, path = self.victim(), self.path("d")
        d = parity_torch.dump(path, self.model)
        os.symlink(victim, os.path.join(path, names[-1]))
        with self.assertRaisesRegex(OSError, "already exists and this dump did not write it") as caught:
            with torch.no_grad(), d:
                self.model(self.x)
        self.assertParityPrefix(caught.exception)
        self.assertUntouched(victim)
        self.assertFalse(os.path.exists(os.path.join(path, "manifest.json")))

    # 2. force=True removes only what a dump of its own wrote.
    def test_force_refuses_a_folder_of_the_users_own_arrays(self):
        path = self.path("mine")
        os.makedirs(path)
        np.save(os.path.join(path, "weights.npy"), np.zeros(3))
        with self.assertRaisesRegex(ValueError, "holds files that are not a parity dump; not removing them") as caught:
            parity_torch.dump(path, self.model, force=True)
        self.assertIn(path, str(caught.exception))
        self.assertParityPrefix(caught.exception)
        self.assertEqual(os.listdir(path), ["weights.npy"])

    def test_force_replaces_a_dump_and_leaves_other_files(self):
        path = self.dump("d")
        old = listed(path)
        for mine in ("notes.txt", "extra.npy"):
            with open(os.path.join(path, mine), "w") as f:
                f.write("mine")
        self.dump("d", force=True)
        self.assertEqual(set(os.listdir(path)), listed(path) | {"manifest.json", "notes.txt", "extra.npy"})
        self.assertEqual(listed(path), old)

    def test_force_refuses_a_manifest_naming_files_outside_the_folder(self):
        victim, path = self.victim(), self.path("d")
        os.makedirs(path)
        with open(os.path.join(path, "manifest.json"), "w") as f:
            json.dump({"format": "parity-dump", "version": 1,
                       "layers": [{"name": "a", "op": "x", "outputs": [{"file": "../victim.txt"}]}]}, f)
        with self.assertRaisesRegex(ValueError, "not a parity dump"):
            parity_torch.dump(path, self.model, force=True)
        self.assertUntouched(victim)

    def test_force_cleans_a_dump_that_never_finished(self):
        path = self.path("d")
        with self.assertRaises(ZeroDivisionError):
            with torch.no_grad(), parity_torch.dump(path, self.model):
                self.model(self.x)
                1 / 0
        self.assertIn(".parity_dump", os.listdir(path))  # the partial dump's own list of its files
        self.assertGreater(len(os.listdir(path)), 1)
        self.dump("d", force=True)
        self.assertEqual(set(os.listdir(path)), listed(path) | {"manifest.json"})

    def test_force_cleans_a_dump_killed_before_its_manifest(self):
        path = self.path("killed")
        script = textwrap.dedent(f"""
            import os, signal, sys
            sys.path.insert(0, {os.path.join(ROOT, "python")!r})
            import torch, parity_torch
            conv = torch.nn.Conv2d(3, 4, 3)
            model = torch.nn.Sequential(conv, torch.nn.ReLU()).eval()
            conv.register_forward_hook(lambda *a: os.kill(os.getpid(), signal.SIGKILL))
            with torch.no_grad(), parity_torch.dump({path!r}, model):
                model(torch.randn(1, 3, 8, 8))
        """)
        r = subprocess.run(["/usr/bin/python3", "-c", script], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, -signal.SIGKILL, r.stderr)
        self.assertTrue(any(n.endswith(".npy") for n in os.listdir(path)))
        self.dump("killed", force=True)
        self.assertEqual(set(os.listdir(path)), listed(path) | {"manifest.json"})

    # 3. The process-wide patches are undone whatever the order of exits.
    def assertNothingPatched(self, *dumps):
        self.assertNotIn("__getitem__", vars(torch.Tensor))
        self.assertIs(torch.Tensor.__getitem__, GETITEM)
        before = {d: sorted(os.listdir(d)) for d in dumps}
        y = torch.randn(4, 4)
        y[y > 0]  # boolean indexing writes nothing into a finished dump
        for d in dumps:
            self.assertEqual(sorted(os.listdir(d)), before[d])

    def test_blocks_closing_out_of_order_on_two_threads_restore_the_patches(self):
        a_open, b_open, a_closed = threading.Event(), threading.Event(), threading.Event()
        errors, models = [], [Net(), Net()]

        def run(i, mine, wait, then=None):
            try:
                with torch.no_grad(), parity_torch.dump(self.path(f"t{i}"), models[i]):
                    models[i](self.x)
                    mine.set()
                    wait.wait(30)
                if then:
                    then.set()
            except Exception as e:  # noqa: BLE001 - reported by the test
                errors.append(e)
                mine.set()

        t1 = threading.Thread(target=run, args=(0, a_open, b_open, a_closed))
        t1.start()
        a_open.wait(30)
        t2 = threading.Thread(target=run, args=(1, b_open, a_closed))  # A closes while B is open
        t2.start()
        t1.join(60)
        t2.join(60)
        self.assertEqual(errors, [])
        self.assertNothingPatched(self.path("t0"), self.path("t1"))

    def test_a_dump_entered_twice_is_refused(self):
        path = self.path("d")
        d = parity_torch.dump(path, self.model)
        with torch.no_grad(), d:
            self.model(self.x)
            with self.assertRaisesRegex(RuntimeError, "already open") as caught:
                with d:
                    pass
        self.assertParityPrefix(caught.exception)
        self.assertTrue(d.complete)
        self.assertEqual(torch.overrides._get_current_function_mode(), None)
        self.assertFalse(any(m._forward_hooks or m._forward_pre_hooks for m in self.model.modules()))
        self.assertNothingPatched(path)

    # 4. A model call from a thread the block did not start.
    def test_a_model_run_from_another_thread_abandons_the_dump(self):
        path, errors = self.path("d"), []

        def other():
            try:
                with torch.no_grad():
                    self.model(self.x)
            except RuntimeError as e:
                errors.append(e)

        with self.assertRaisesRegex(RuntimeError, "dump abandoned") as at_exit:
            with torch.no_grad(), parity_torch.dump(path, self.model):
                t = threading.Thread(target=other, name="loader-7")
                t.start()
                t.join(60)
                self.model(self.x)
        self.assertEqual(len(errors), 1, errors)
        for e in (errors[0], at_exit.exception):
            self.assertParityPrefix(e)
            self.assertIn(path, str(e))
            self.assertIn("'loader-7'", str(e))
        self.assertFalse(os.path.exists(os.path.join(path, "manifest.json")))
        self.assertNothingPatched(path)

    # 5. Sparse and complex tensors: the model runs as without the recorder; the calls not recorded are named.
    def test_sparse_and_complex_calls_are_skipped_and_named(self):
        class Spectral(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(8, 8)

            def forward(self, x):
                s = torch.sparse.softmax(torch.eye(8).to_sparse(), 1)  # a sparse result not as a dense call's: not recorded
                y = torch.sparse.mm(s, self.proj(x).t()).t()  # recorded on s's dense values
                # a dense form of 4e8 elements (1.6 GB), beyond intercept.DENSE_FORM_LIMIT: not recorded
                huge = torch.sparse_coo_tensor(torch.tensor([[0, 19999], [3, 7]]), torch.ones(2), (20000, 20000))
                y = y + torch.sparse.mm(huge, torch.ones(20000, 8))[:2]
                c = torch.fft.fft(y)  # complex64
                return torch.relu(torch.abs(c) + y)

        model = Spectral().eval()
        x = torch.randn(2, 8)
        with torch.no_grad():
            want = model(x)
        path = self.path("d")

        def run():
            with torch.no_grad(), parity_torch.dump(path, model):
                return model(x)
        err, got = stderr_of(run)
        self.assertTrue(torch.equal(got, want))
        self.assertRegex(err, r"parity_torch: .*: skipped \d+ calls with sparse/complex32 tensors: torch._sparse_softmax")
        m = manifest(path)
        self.assertIn("torch._sparse_mm (layer", m["run"]["skipped"])  # the huge one's, alone
        self.assertNotIn("torch._sparse_mm x2", m["run"]["skipped"])
        self.assertIn("torch._sparse_mm", [l["op"] for l in m["layers"]])
        self.assertNotIn("fft", m["run"]["skipped"])  # complex64: recorded as its real view
        dtypes = {t["dtype"] for l in m["layers"] for t in l["inputs"] + l["outputs"]}
        self.assertFalse(any("complex" in d for d in dtypes), dtypes)
        r = subprocess.run([PARITY, "compare", path, path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    # 6. A full disk (RLIMIT_FSIZE) names the file, removes the partial one, leaves no manifest.
    def test_a_full_disk_names_the_file_and_leaves_no_manifest(self):
        path = self.path("d")
        script = textwrap.dedent(f"""
            import resource, signal, sys
            sys.path.insert(0, {os.path.join(ROOT, "python")!r})
            import torch, parity_torch
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
            model = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.SiLU()).eval()
            try:
                with torch.no_grad(), parity_torch.dump({path!r}, model):
                    model(torch.randn(1, 3, 128, 128))  # each output is 2 MiB
            except OSError as e:
                print(type(e).__name__, e.errno, e)
        """)
        r = subprocess.run(["/usr/bin/python3", "-c", script], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^DumpError (\d+|None) parity_torch: disk full writing " + path +
                         r"/[^ ]+\.npy: dump abandoned, nothing written as complete\n$")
        self.assertFalse(os.path.exists(os.path.join(path, "manifest.json")))
        for name in os.listdir(path):
            if name.endswith(".npy"):
                np.load(os.path.join(path, name))  # no partial file left behind
        r = subprocess.run([PARITY, "compare", path, path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 3)
        self.assertIn("incomplete dump", r.stdout + r.stderr)

    # 7. calls=N never met is said, and close() writes what the dump holds.
    def test_calls_never_met_are_said(self):
        path = self.path("d")
        d = parity_torch.dump(path, self.model, calls=2)

        def block():
            with torch.no_grad(), d:
                self.model(self.x)
        err, _ = stderr_of(block)
        self.assertRegex(err, r"parity_torch: .*/d: 1 forward call of the model ran, calls selects call 1 too")
        self.assertFalse(d.complete)
        err, _ = stderr_of(d.close)
        self.assertIn("the dump holds calls 0", err)
        self.assertEqual(manifest(path)["run"]["calls"], "0")

    def test_a_dump_never_completed_says_so_when_collected(self):
        path = self.path("d")

        def forgotten():
            d = parity_torch.dump(path, self.model, calls=3)
            with torch.no_grad(), d:
                self.model(self.x)
            del d
            gc.collect()
        err, _ = stderr_of(forgotten)
        self.assertRegex(err, r"parity_torch: .*/d: no manifest written: 1 forward call of the model ran, "
                              r"calls selects calls 1, 2 too")

    # 8. compare/bisect with a timeout kill parity and say so.
    def test_a_parity_that_does_not_finish_is_killed_at_the_timeout(self):
        fake, pidfile = self.path("parity"), self.path("pid")
        with open(fake, "w") as f:
            f.write(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 20\n")
        os.chmod(fake, 0o755)
        for run in (parity_torch.compare, parity_torch.bisect):
            started = time.monotonic()
            with mock.patch.dict(os.environ, {"PARITY": fake}):
                with self.assertRaises(parity_torch.ParityTimeout) as caught:
                    run("dump_a", "dump_b", timeout=1)
            self.assertLess(time.monotonic() - started, 10)
            message = str(caught.exception)
            self.assertParityPrefix(caught.exception)
            for part in ("dump_a", "dump_b", "timeout=1"):
                self.assertIn(part, message)
            with open(pidfile) as f:
                pid = int(f.read())
            with self.assertRaises(ProcessLookupError):  # killed and reaped
                os.kill(pid, 0)

    # 9. Every message in parity_torch's own words.
    def test_messages_start_with_parity_torch(self):
        caught = []
        for make in (lambda: parity_torch.dump(self.path("a"), "not a model"),
                     lambda: parity_torch.dump(self.path("b"), self.model, calls=0),
                     lambda: parity_torch.dump(self.path("c"), self.model, calls=[-1]),
                     lambda: parity_torch.dump(self.victim(), self.model),
                     lambda: parity_torch.dump(self.dump("full"), self.model)):
            with self.assertRaises((TypeError, ValueError)) as c:
                make()
            caught.append(c.exception)
        with mock.patch.dict(os.environ, {"PARITY": "/nonexistent/parity"}):
            with self.assertRaises(parity_torch.ParityNotFound) as c:
                parity_torch.compare("a", "b")
            caught.append(c.exception)
        for e in caught:
            self.assertParityPrefix(e)

    # 10. A traced model runs its graph in C++: refused at once, saying so, before any file is made.
    def test_torchscript_model_is_refused(self):
        traced = torch.jit.trace(self.model, torch.ones(1, 3, 8, 8))
        with self.assertRaises(TypeError) as c:
            parity_torch.dump(self.path("traced"), traced)
        self.assertParityPrefix(c.exception)
        self.assertIn("TorchScript", str(c.exception))
        self.assertFalse(os.path.exists(self.path("traced")))

    # 10b. A scripted submodule runs its graph in C++ too: nothing inside it is a layer, and its
    # output reaches the next layer as data; the block says so, naming it.
    def test_a_scripted_submodule_is_named_on_stderr(self):
        class Mixed(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = torch.nn.Linear(4, 4), torch.jit.script(torch.nn.Linear(4, 4))

            def forward(self, x):
                return self.b(self.a(x))

        model, path = Mixed().eval(), self.path("mixed")

        def run():
            with torch.no_grad(), parity_torch.dump(path, model):
                model(torch.randn(2, 4))
        err, _ = stderr_of(run)
        self.assertRegex(err, r"parity_torch: .*: b: TorchScript .*nothing inside is recorded.*PYTORCH_JIT=0")

    # 10c. So does a TorchScript function the model's forward calls (a fused bias and GELU).
    def test_a_scripted_function_is_named_on_stderr(self):
        model, path = WithScriptedFunction().eval(), self.path("fused")

        def run():
            with torch.no_grad(), parity_torch.dump(path, model):
                model(torch.randn(2, 4))
        err, _ = stderr_of(run)
        self.assertRegex(err, r"parity_torch: .*: bias_gelu \(a function\): TorchScript .*nothing inside is recorded")
        plain, _ = stderr_of(lambda: self.run_plain(path + "-plain"))
        self.assertNotIn("TorchScript", plain)

    # The fast-path notice names the attention modules PyTorch may fuse, and no others: a
    # sequence-first encoder, a decoder's attention over its memory and attention with extra key
    # and value rows never take it (an adversarial round found them all named).
    def test_the_fast_path_notice_names_only_modules_that_may_take_it(self):
        torch.manual_seed(0)
        model = torch.nn.ModuleDict({
            "fused": torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
            "seq_first": torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
            "decoder": torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
            "bias_kv": torch.nn.MultiheadAttention(8, 2, add_bias_kv=True, batch_first=True)}).eval()
        path = self.path("fast-path")

        def run():
            x = torch.randn(2, 3, 8)
            with torch.no_grad(), parity_torch.dump(path, model):
                y = model["fused"](x)
                model["seq_first"](x.transpose(0, 1))
                model["decoder"](y, x)
                model["bias_kv"](y, y, y)
        err, _ = stderr_of(run)
        notice = next(line for line in err.splitlines() if "fused fast path" in line)
        named = notice.split(": ")[2].split(", ")
        self.assertEqual(named, ["fused", "fused.self_attn", "decoder.self_attn"])

    def run_plain(self, path):
        model = torch.nn.Sequential(torch.nn.Linear(4, 4)).eval()
        with torch.no_grad(), parity_torch.dump(path, model):
            model(torch.randn(2, 4))



@torch.jit.script
def bias_gelu(bias, y):
    x = bias + y
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class WithScriptedFunction(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 4, bias=False), torch.nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return bias_gelu(self.b, self.a(x))


class Inverted(torch.nn.Module):
    def forward(self, x):
        m = x > 0
        return x * (~m) + m.to(x.dtype) * 2  # ~m reads m: it writes nothing


class Recording(unittest.TestCase):
    def test_invert_is_not_an_in_place_write(self):
        # __invert__ starts with "__i" like __iadd__: it was taken as a write into m, so the
        # later m.to(...) was recorded as reading the invert's output.
        with tempfile.TemporaryDirectory() as d:
            model = Inverted()
            with torch.no_grad(), parity_torch.dump(d, model, force=True):
                model(torch.randn(4, 5))
            sources = {l["name"]: [t.get("source") for t in l["inputs"]] for l in manifest(d)["layers"]}
            self.assertEqual(sources["to"], ["threshold:out0"])
            self.assertEqual(sources["mul"][1], "invert:out0")

if __name__ == "__main__":
    PARITY = support.parity_binary()
    unittest.main(verbosity=2)
