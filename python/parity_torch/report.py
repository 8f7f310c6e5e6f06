"""compare() and bisect() from Python: run the built `parity` binary on two dumps and return its
JSON report as a Report.

Standard library only: the verdict is the binary's (the same judge, tolerances and exit codes as
`parity compare` on a terminal); this module only builds the command line and reads the JSON back.
"""
import json
import os
import shutil
import subprocess
import tempfile

# Exit codes 0..2 are verdicts (docs/COMMANDS.md, "Exit codes"); 3 and up mean parity could not judge.
VERDICTS = {0: "pass", 1: "failures", 2: "structural failures"}
COUNTS = ("passed", "explained", "failed", "structural", "propagated", "mistrusted", "unchecked")


class ParityError(RuntimeError):
    """parity could not judge the dumps (exit 3 or more, or no JSON written): a bad option, a
    missing or corrupt dump, `--layers` matching nothing. The message is parity's own."""

    def __init__(self, message, exit_code=None, command=None):
        super().__init__(message)
        self.exit_code = exit_code
        self.command = command


class ParityNotFound(ParityError):
    """No `parity` binary where PARITY points, or none on PATH."""


class ParityTimeout(ParityError):
    """parity ran past the `timeout` given to compare() or bisect(): it was killed."""


class Report:
    """The JSON report of one `parity compare` or `parity bisect` run.

    exit_code  parity's exit code: 0 every layer shown passed, 1 failures (an origin, propagated or
               unchecked layers), 2 a structural failure no origin explains
    rows       one dict per layer, as in the JSON's "layers" (name, op, state, origin, defective,
               propagated_from, reason, note, outputs ...)
    states     {layer name: state}: PASSED, FAILED, UNCHECKED or MISTRUSTED
    counts     {"passed", "explained", "failed", "structural", "propagated", "mistrusted", "unchecked"}
    summary    the summary line parity prints last
    origin     the origin's row (a dict), or None
    origins    the names of every origin, the first one first
    data       the whole JSON report as parity wrote it
    output     what parity printed on stdout (compare's table, bisect's origin)
    """

    def __init__(self, command, data, exit_code, output=""):
        self.command = command
        self.data = data
        self.exit_code = exit_code
        self.output = output
        self.rows = data.get("layers", [])  # two .npy files give one verdict, no layers
        # Duplicate names are possible (a layer name recorded twice: "occurrence"); the first wins.
        self.states = {}
        for row in self.rows:
            self.states.setdefault(row["name"], row["state"])
        self.counts = {k: data[k] for k in COUNTS if k in data}
        self.origins = data.get("origins", [])
        # The JSON names the origin; its row is the first origin row of that name.
        name = data.get("origin")
        self.origin = next((r for r in self.rows if r["origin"] and r["name"] == name), None) if name else None

    @property
    def ok(self):
        return self.exit_code == 0

    @property
    def summary(self):
        if "summary" in self.data:
            return self.data["summary"]
        return f"{self.data.get('state', '?')}: {self.data.get('reason', '')}".rstrip(": ")  # two tensors

    def __repr__(self):
        lines = [f"parity {' '.join(self.command)}: exit {self.exit_code} ({VERDICTS.get(self.exit_code, 'error')})",
                 self.summary]
        o = self.origin
        if o:
            # As `parity bisect` prints it: name, index and op, the defective side, the reason.
            lines.append(f"origin: {o['name']} (layer {o['index']}, {o['op']})")
            lines.append(f"  defective: {o.get('defective_text') or o['defective']}")  # parity's own words
            if o.get("reason"):
                lines.append(f"  {o['reason']}")
        elif self.exit_code != 0 and self.rows:
            lines.append("origin: none")
        return "\n".join(lines)

    __str__ = __repr__


def find_parity():
    """The parity binary: $PARITY when set (and then only it), else `parity` on PATH."""
    how_to_build = ("build it with scripts/test (or cmake -S . -B build -G Ninja && cmake --build build) "
                    "in the parity checkout; the binary is build/cli/parity. Point PARITY=/path/to/parity "
                    "at it, or put its folder on PATH")
    path = os.environ.get("PARITY")
    if path:
        # An explicit PARITY that is wrong is an error, not a reason to pick another binary silently.
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ParityNotFound(f"parity_torch: parity was not found: PARITY={path} is not an executable file; {how_to_build}")
        return path
    found = shutil.which("parity")
    if not found:
        raise ParityNotFound(f"parity_torch: parity was not found: PARITY is not set and no parity is on PATH; {how_to_build}")
    return found


def flags(options):
    """Keyword options as parity flags: precision="fp16" -> --precision fp16, tol_file=... ->
    --tol-file ..., a True boolean -> a bare flag, False or None -> left out, a list -> the flag
    once per item. Unknown names pass through, so parity refuses them with its own message."""
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            args += [flag, os.fspath(item) if isinstance(item, os.PathLike) else str(item)]
    return args


def _run(command, a, b, options):
    binary = find_parity()
    keep = options.pop("json", None)  # the caller's own --json path: written there and kept
    timeout = options.pop("timeout", None)  # seconds, or None: parity's own flag has no such name
    with tempfile.TemporaryDirectory(prefix="parity_report.") as tmp:
        # A path in a fresh folder, not a created temporary file: "the JSON exists" must mean
        # parity wrote it.
        path = os.fspath(keep) if keep else os.path.join(tmp, "report.json")
        if keep and os.path.exists(path):
            os.remove(path)
        args = [command, os.fspath(a), os.fspath(b), "--json", path] + flags(options)
        try:
            # On expiry subprocess.run kills parity and waits for it before raising.
            r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ParityTimeout(f"parity_torch: parity {command} {os.fspath(a)} {os.fspath(b)} did not finish within "
                                f"timeout={timeout} s: killed, no report", None, [binary, *args]) from None
        # 3 and up: parity could not judge; below 0: killed by a signal, whatever it wrote.
        if r.returncode not in VERDICTS or not os.path.exists(path):
            # parity says why in one line on stderr (exit 4's "nothing checked" goes to stdout).
            why = r.stderr.strip() or (r.stdout.strip().splitlines() or [""])[-1]
            raise ParityError(why or f"parity_torch: parity {command} exited {r.returncode} without writing its JSON report",
                              r.returncode, [binary, *args])
        with open(path) as f:
            data = json.load(f)
    return Report([command, os.fspath(a), os.fspath(b)] + flags(options), data, r.returncode, r.stdout)


def compare(a, b, **options):
    """Runs `parity compare A B --json ...` and returns its Report (A the expected side, B the one
    under test). Options are parity's flags: compare(a, b, precision="fp16", layers="^model\\.8",
    atol=1e-4, rtol=1e-3, judge="aten", all=True). Exit codes 0, 1 and 2 are verdicts and return a
    Report (see .exit_code); ParityError when parity could not judge (its message included).
    timeout=SECONDS (not a parity flag): parity is killed past it and ParityTimeout raised."""
    return _run("compare", a, b, dict(options))


def bisect(a, b, **options):
    """Runs `parity bisect A B --json ...`: the same report as compare, read for its .origin (the
    first layer where the runs part ways, its defective side and reason). bisect also takes
    rerun="aten"; its printed rerun verdict is in .output. timeout= as for compare."""
    return _run("bisect", a, b, dict(options))
