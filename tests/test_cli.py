"""The `planner` command's own behaviour (each subcommand is tested beside its module)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_output_into_a_closed_pipe_is_not_an_error():
    """`planner ... | head` closes the pipe early: exit 0, no traceback."""
    p = subprocess.Popen([sys.executable, "-m", "planner", "allocate", "--instance",
                          str(ROOT / "examples" / "instance.json"), "--allocator", "dp", "--map", "--json"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the command prints
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert "Traceback" not in err
