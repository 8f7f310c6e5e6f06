"""parity_torch.compare / parity_torch.bisect: the Python API over the built `parity` binary.

Run by ctest (label python) as: /usr/bin/python3 tests/python/compare_api_test.py <parity binary>.
Exit 77 (ctest: skipped) when /usr/bin/python3 has no torch.
Every verdict the API returns is checked against the CLI's own JSON, run here independently.
"""
import json
import os
import re
import subprocess
import tempfile
import unittest
from unittest import mock

import support
from support import ROOT

torch = support.require("torch")

import parity_torch  # noqa: E402

PARITY = None


class Net(torch.nn.Module):
    """Small, with a residual add, so a planted defect has layers after it to propagate into."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.stem_act = torch.nn.SiLU()
        self.body = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.body_act = torch.nn.SiLU()
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = self.stem_act(self.stem(x))
        y = y + self.body_act(self.body(y))
        return torch.sigmoid(self.head(y))


def bump(module, inputs, output):
    """The planted defect: one channel of `body`'s output off by 1e-3, as a wrong kernel would."""
    output = output.clone()
    output[:, 3] += 1e-3
    return output


def read(path):
    with open(path) as f:
        return f.read()


def cli(command, a, b, *flags):
    """The CLI run by hand: (exit code, its JSON report or None, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        r = subprocess.run([PARITY, command, a, b, "--json", path, *flags], capture_output=True, text=True)
        data = json.loads(read(path)) if os.path.exists(path) else None
    return r.returncode, data, r.stdout, r.stderr


class Dumps(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        torch.manual_seed(0)
        cls.model = Net().eval()
        cls.x = torch.randn(1, 3, 16, 16)
        cls.fp32 = cls.dump("fp32", torch.float32)
        cls.fp64 = cls.dump("fp64", torch.float64)  # written as float32: differs by rounding only
        cls.bumped = cls.dump("bumped", torch.float64, defect=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def dump(cls, name, dtype, defect=False):
        path = os.path.join(cls.tmp.name, name)
        model = cls.model.to(dtype)
        handle = model.body.register_forward_hook(bump) if defect else None
        image = cls.x.to(dtype)  # before the block: a cast inside it would be a layer of one side only
        try:
            with torch.no_grad(), parity_torch.dump(path, model, dtype=torch.float32):
                model(image)
        finally:
            if handle:
                handle.remove()
            cls.model.float()
        return path

    def assertSameVerdict(self, report, command, a, b, *flags):
        """report (from the API) says what the CLI says: exit code, every row's state, counts, origin."""
        code, data, _, err = cli(command, a, b, *flags)
        self.assertIsNotNone(data, err)
        self.assertEqual(report.exit_code, code)
        self.assertEqual([(r["name"], r["state"]) for r in report.rows], [(r["name"], r["state"]) for r in data["layers"]])
        self.assertEqual(report.summary, data["summary"])
        for k in ("passed", "explained", "failed", "structural", "mistrusted", "unchecked"):
            self.assertEqual(report.counts[k], data[k], k)
        self.assertEqual(report.origin["name"] if report.origin else None, data["origin"])
        self.assertEqual(report.data, data)


class Verdicts(Dumps):
    def test_float64_against_float32_passes_as_the_cli_says(self):
        report = parity_torch.compare(self.fp32, self.fp64)
        self.assertEqual(report.exit_code, 0, report.output)
        self.assertTrue(report.ok)
        self.assertIsNone(report.origin)
        self.assertEqual(set(report.states.values()), {"PASSED"})
        self.assertEqual(list(report.states), ["stem", "stem_act", "body", "body_act", "add", "head", "sigmoid", "output"])
        self.assertSameVerdict(report, "compare", self.fp32, self.fp64)
        # Printed: the command with its verdict, then parity's summary line; no origin on a pass.
        text = repr(report)
        self.assertEqual(text.splitlines()[1], report.summary)
        self.assertIn("exit 0", text.splitlines()[0])
        self.assertNotIn("origin", text)

    def test_a_planted_defect_is_the_origin_in_compare_and_bisect(self):
        for command in (parity_torch.compare, parity_torch.bisect):
            report = command(self.fp32, self.bumped)
            self.assertEqual(report.exit_code, 1, report.output)  # a result, not an exception
            self.assertEqual((report.origin["name"], report.origin["op"], report.origin["defective"]),
                             ("body", "conv2d", "B"), report)
            self.assertEqual(report.states["stem"], "PASSED")
            self.assertEqual(report.states["head"], "PROPAGATED")  # from body
            self.assertSameVerdict(report, command.__name__, self.fp32, self.bumped)
            text = str(report)
            self.assertIn(report.summary, text)
            self.assertIn("origin: body (layer", text)
            self.assertIn("defective: B", text)
            self.assertIn(report.origin["reason"], text)

    def test_swapping_the_sides_swaps_the_defective_side(self):
        report = parity_torch.bisect(self.bumped, self.fp32)
        self.assertEqual((report.origin["name"], report.origin["defective"]), ("body", "A"))

    def test_a_structural_mismatch_is_exit_2_not_an_error(self):
        other = os.path.join(self.tmp.name, "other")
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 2, 1), torch.nn.Sigmoid()).eval()
        with torch.no_grad(), parity_torch.dump(other, model):
            model(self.x)
        report = parity_torch.compare(self.fp32, other)
        self.assertEqual(report.exit_code, 2, report.output)
        self.assertGreater(report.counts["structural"], 0)
        self.assertSameVerdict(report, "compare", self.fp32, other)


class Options(Dumps):
    def test_keywords_become_flags(self):
        self.assertEqual(parity_torch.report.flags({"precision": "fp16", "tol_file": "t.json", "failed": True, "all": False,
                                                    "judge": None, "atol": 1e-4, "backend_plugin": ["a.so", "b.so"]}),
                         ["--precision", "fp16", "--tol-file", "t.json", "--failed", "--atol", "0.0001",
                          "--backend-plugin", "a.so", "--backend-plugin", "b.so"])

    def test_options_reach_parity(self):
        report = parity_torch.compare(self.fp32, self.bumped, layers="^(body|head)$", precision="fp16")
        self.assertEqual(report.data["precision"], "fp16")
        self.assertEqual(set(report.states), {"body", "head"})  # --layers limits the rows
        self.assertSameVerdict(report, "compare", self.fp32, self.bumped, "--layers", "^(body|head)$", "--precision", "fp16")

    def test_a_true_boolean_is_a_bare_flag(self):
        # --failed: the printed table keeps only the rows that did not pass (stem passed).
        full = parity_torch.compare(self.fp32, self.bumped)
        failed = parity_torch.compare(self.fp32, self.bumped, failed=True)
        self.assertTrue(re.search(r"^PASSED.*\bstem\b", full.output, re.M), full.output)
        self.assertFalse(re.search(r"^PASSED", failed.output, re.M), failed.output)

    def test_json_keeps_the_report_file(self):
        path = os.path.join(self.tmp.name, "kept.json")
        report = parity_torch.compare(self.fp32, self.fp64, json=path)
        self.assertEqual(json.loads(read(path)), report.data)

    def test_an_unknown_option_raises_with_parity_s_message(self):
        with self.assertRaises(parity_torch.ParityError) as caught:
            parity_torch.compare(self.fp32, self.fp64, no_such_option=1)
        self.assertIsInstance(caught.exception, RuntimeError)
        self.assertEqual(caught.exception.exit_code, 3)
        code, data, _, err = cli("compare", self.fp32, self.fp64, "--no-such-option", "1")
        self.assertEqual((code, data), (3, None))
        self.assertEqual(str(caught.exception), err.strip())  # parity's own line, as is
        self.assertIn("--no-such-option", str(caught.exception))

    def test_a_bad_value_raises_with_parity_s_message(self):
        with self.assertRaisesRegex(parity_torch.ParityError, r"--precision: unknown profile 'fp8'"):
            parity_torch.bisect(self.fp32, self.fp64, precision="fp8")
        with self.assertRaisesRegex(parity_torch.ParityError, r"absent: does not exist"):
            parity_torch.compare(self.fp32, os.path.join(self.tmp.name, "absent"))


class MissingBinary(unittest.TestCase):
    def test_parity_pointing_nowhere_says_how_to_build(self):
        with mock.patch.dict(os.environ, {"PARITY": "/nonexistent/parity"}):
            with self.assertRaises(parity_torch.ParityNotFound) as caught:
                parity_torch.compare("a", "b")
        message = str(caught.exception)
        self.assertIsInstance(caught.exception, parity_torch.ParityError)
        for part in ("parity was not found", "PARITY=/nonexistent/parity", "scripts/test", "build/cli/parity",
                     "PARITY=/path/to/parity"):
            self.assertIn(part, message)

    def test_nothing_on_path(self):
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {"PATH": empty}):
            os.environ.pop("PARITY", None)
            with self.assertRaisesRegex(parity_torch.ParityNotFound, "parity was not found: PARITY is not set and no parity is on PATH"):
                parity_torch.bisect("a", "b")


class ReadmeSection(unittest.TestCase):
    """README's "Compare and bisect from Python": its example, run after the section's first Python
    block (the dumps it uses), prints what the README shows (lines cut at "..." match as prefixes)."""

    def test_readme_example_prints_what_the_readme_shows(self):
        text = read(os.path.join(ROOT, "README.md"))
        section = text.split("## Compare your own PyTorch model", 1)[1].split("\n## ", 1)[0]
        dumps = re.findall(r"```python\n(.*?)```", section, re.S)[0]
        sub = section.split("### Compare and bisect from Python", 1)[1]
        example = re.findall(r"```python\n(.*?)```", sub, re.S)[0]
        shown = re.findall(r"```text\n(.*?)```", sub, re.S)[0].splitlines()
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PARITY=PARITY)
            for i, block in enumerate((dumps, example)):
                with open(os.path.join(tmp, f"{i}.py"), "w") as f:
                    f.write(block)
                r = subprocess.run(["/usr/bin/python3", f"{i}.py"], cwd=tmp, env=env, capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        printed = r.stdout.splitlines()
        self.assertEqual(len(printed), len(shown), r.stdout)
        for got, want in zip(printed, shown):
            if want.endswith("..."):
                self.assertTrue(got.startswith(want[:-3]), f"{got!r}\n{want!r}")
            else:
                self.assertEqual(got, want)


if __name__ == "__main__":
    PARITY = support.parity_binary()
    unittest.main(verbosity=2)
