"""README.md's example sessions, run as written, so the README cannot drift from what parity prints.

Run by ctest (label cli) as: python3 tests/readme_examples_test.py <parity binary>.

Every fenced block holding `$ parity ...` lines is a session: its commands run in order, all blocks
in one scratch folder (later blocks use the dumps earlier ones made; `cases/` is the project's),
and every line the README shows under a command must appear in that command's output, in order.
Lines may be left out; `...` alone stands for lines left out on purpose; a line ending in `...` is
a prefix of the real one; timings (`2646.7 ms`) match any timing. A `# comment` after two spaces
on a command line is the README's, not the shell's.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
    """[(command, [shown lines])] of each block holding `$ parity` lines, in README order."""
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
    shown, real = normal(shown), normal(real)
    if shown.endswith("..."):
        return real.startswith(shown[:-3].rstrip())
    return shown == real


def check(parity, text):
    failures = []
    with tempfile.TemporaryDirectory(prefix="readme.") as scratch:
        os.symlink(os.path.join(ROOT, "cases"), os.path.join(scratch, "cases"))
        for steps in sessions(text):
            for command, shown in steps:
                assert command.startswith("parity "), command
                r = subprocess.run(parity + command[len("parity"):], shell=True, executable="/bin/bash", cwd=scratch, capture_output=True,
                                   text=True)
                real = (r.stdout + r.stderr).splitlines()
                at = 0
                for line in shown:
                    if line.strip() in ("", "..."):
                        continue
                    j = next((k for k in range(at, len(real)) if matches(line, real[k])), None)
                    if j is None:
                        failures.append(f"$ {command}\n  README shows: {line}\n  not in what it printed (exit {r.returncode}):\n    "
                                        + "\n    ".join(real[at:]))
                        break
                    at = j + 1
    return failures


def main():
    parity = os.path.abspath(sys.argv[1])
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    count = sum(len(s) for s in sessions(text))
    failures = check(parity, text)
    for f in failures:
        print(f + "\n")
    print(f"{count} README commands run, {len(failures)} whose output differs from what the README shows")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
