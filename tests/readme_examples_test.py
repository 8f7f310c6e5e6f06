"""The example sessions of README.md and docs/*.md, run as written, so the pages cannot drift from
what parity prints.

Run by ctest (label cli) as: python3 tests/readme_examples_test.py <parity binary>.

Every fenced block without a language tag holding `$ parity ...` lines is a session: its commands
run in order, and every line a page shows under a command must appear in that command's output,
in order. Pages run in one scratch folder (`cases/` is the project's), README.md first, then
docs/*.md in name order, so a later block may use the dumps an earlier one made, the README's
quick start's `ref`, `aten` and `bad` among them. Lines may be left out; `...` alone stands for
lines left out on purpose; a line ending in `...` is a prefix of the real one, and `...` inside a
line stands for text cut there (a figure LibTorch's CPU kernels make differently on another CPU); timings
(`2646.7 ms`) match any timing. A `# comment` after two spaces on a command line is the page's,
not the shell's.

Fewer than MIN_COMMANDS commands is a failure: an example moved between pages must still run.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The commands run when this floor was last raised (17 from README.md alone before the reference
# moved to docs/): lower it only when an example is removed on purpose.
MIN_COMMANDS = 21


def pages():
    """[(path relative to ROOT, text)]: README.md, then docs/*.md in name order."""
    docs = os.path.join(ROOT, "docs")
    names = ["README.md"] + sorted(os.path.join("docs", n) for n in os.listdir(docs) if n.endswith(".md"))
    out = []
    for name in names:
        with open(os.path.join(ROOT, name), encoding="utf-8") as f:
            out.append((name, f.read()))
    return out


def fenced_blocks(text):
    """The text of each fenced block without a language tag (```), in order."""
    blocks, inside, plain, body = [], False, False, []
    for line in text.splitlines():
        if line.startswith("```"):
            if inside:
                if plain:
                    blocks.append("\n".join(body) + "\n")
                inside = False
            else:
                inside, plain, body = True, line.strip() == "```", []
        elif inside:
            body.append(line)
    return blocks


def sessions(text):
    """[[(command, [shown lines])] of each block holding `$ parity` lines], in the page's order."""
    out = []
    for block in fenced_blocks(text):
        if not any(l.startswith("$ parity ") for l in block.splitlines()):
            continue
        steps = []
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("$ "):
                command = line[2:]
                while command.rstrip().endswith("\\") and i + 1 < len(lines):  # a command continued
                    i += 1
                    command = command.rstrip()[:-1] + " " + lines[i].strip()
                steps.append((command.split("  #")[0].strip(), []))
            elif steps:
                steps[-1][1].append(line.rstrip())
            i += 1
        out.append(steps)
    return out


def normal(line):
    return re.sub(r"\d+(\.\d+)? ms\b", "<t> ms", line.rstrip())


def matches(shown, real):
    """Whether the page's line `shown` stands for the printed line `real`: equal, but that each
    `...` in it stands for any text (figures that differ from one CPU to another: LibTorch's
    kernels round otherwise there), and one at its end for the rest of the line."""
    shown, real = normal(shown), normal(real)
    pieces = shown.split("...")
    if len(pieces) == 1:
        return shown == real
    # The spaces beside a `...` are the page's: the columns it cut may be wider or narrower.
    cut = [pieces[0].rstrip()] + [p.strip() for p in pieces[1:-1]] + [pieces[-1].lstrip()]
    pattern = ".*?".join(re.escape(p) for p in cut)
    return (re.fullmatch if pieces[-1] else re.match)(pattern, real) is not None


def check(parity, pages):
    """Runs every page's sessions in one scratch folder; returns the failures, each naming its page."""
    failures = []
    with tempfile.TemporaryDirectory(prefix="readme.") as scratch:
        os.symlink(os.path.join(ROOT, "cases"), os.path.join(scratch, "cases"))
        for page, text in pages:
            for steps in sessions(text):
                for command, shown in steps:
                    assert command.startswith("parity "), command
                    r = subprocess.run(parity + command[len("parity"):], shell=True, executable="/bin/bash", cwd=scratch,
                                       capture_output=True, text=True)
                    real = (r.stdout + r.stderr).splitlines()
                    at = 0
                    for line in shown:
                        if line.strip() in ("", "..."):
                            continue
                        j = next((k for k in range(at, len(real)) if matches(line, real[k])), None)
                        if j is None:
                            failures.append(f"{page}: $ {command}\n  {page} shows: {line}\n  not in what it printed (exit {r.returncode}):\n    "
                                            + "\n    ".join(real[at:]))
                            break
                        at = j + 1
    return failures


def main():
    parity = os.path.abspath(sys.argv[1])
    all_pages = pages()
    counts = [(page, sum(len(s) for s in sessions(text))) for page, text in all_pages]
    count = sum(n for _, n in counts)
    failures = check(parity, all_pages)
    for f in failures:
        print(f + "\n")
    print(", ".join(f"{page} {n}" for page, n in counts if n))
    print(f"{count} commands run, {len(failures)} whose output differs from what their page shows")
    if count < MIN_COMMANDS:
        print(f"only {count} commands found, fewer than the {MIN_COMMANDS} run before: an example was lost")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
