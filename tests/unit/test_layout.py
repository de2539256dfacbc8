"""The library's layout (planner/): no import cycle, only the entry points at the root, a docstring
in every folder's __init__.py, no import of Streamlit/Plotly/the app anywhere in the library, and
`import planner` works (in a fresh interpreter, without Streamlit).

The import graph is built from the source with `ast`: every `import` and `from ... import` at module
level AND inside functions (a function-level import is still a dependency; only imports under
`if TYPE_CHECKING:` are left out, they never run). `from planner.a import b` is an edge to the
module planner.a.b when that module exists, otherwise to planner.a, and to every package on the way
(planner.a: importing planner.a.b runs planner/a/__init__.py first, so a package's re-exports count).

Imports live at module level. A function-level import is kept only where a module is heavy to load
(Pyomo, scikit-survival, Dask, SciPy) or would slow every `planner` command (the CLI loads all its
subcommand modules to build the parser), and it says so with a trailing `# lazy: <reason>`.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys

from tests.helpers import ROOT

PLANNER = ROOT / "planner"

# The root of planner/ holds the package's entry points and cross-cutting leaves, nothing else:
#   __init__  the package (and the module map in its docstring)
#   __main__  `python -m planner`
#   cli       the `planner` command (its subcommands live in planner/commands/)
#   errors    InputError, raised by every folder (a leaf: imports nothing of planner)
#   paths     where shipped data, the default database and artifacts live (used by every folder)
#   times     the one time parser and ISO formatter (used by logs/, idle/, the CLI and the app)
ROOT_MODULES = {"__init__", "__main__", "cli", "errors", "paths", "times"}


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def planner_modules() -> dict[str, object]:
    return {module_name(p): p for p in sorted(PLANNER.rglob("*.py")) if "__pycache__" not in p.parts}


@functools.cache
def parse(path) -> ast.Module:
    """The file's syntax tree, parsed once per test process (three tests walk every module)."""
    return ast.parse(path.read_text(), filename=str(path))


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Line numbers inside `if TYPE_CHECKING:` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def imports_of(name: str, path, modules) -> dict[str, int]:
    """planner modules that `name` imports (anywhere in the file) -> the line of the first import."""
    tree = parse(path)
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    out: dict[str, int] = {}

    def add(target: str, line: int):
        while target and target not in modules:  # planner.a.b.name -> planner.a.b
            target = target.rpartition(".")[0]
        while target:  # importing planner.a.b runs planner/a/__init__.py first: an edge to each package
            if target != name and not name.startswith(target + "."):
                out.setdefault(target, line)
            target = target.rpartition(".")[0]

    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "planner" or a.name.startswith("planner."):
                    add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not (mod == "planner" or mod.startswith("planner.")):
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                add(sub if sub in modules else mod, node.lineno)
    return out


def import_graph() -> dict[str, dict[str, int]]:
    modules = planner_modules()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One cycle as a path [a, b, ..., a], or None (iterative DFS, deterministic order)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        stack = [(root, iter(sorted(graph[root])))]
        colour[root] = GREY
        path = [root]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = BLACK
                stack.pop()
                path.pop()
            elif colour.get(nxt, BLACK) == GREY:
                return path[path.index(nxt):] + [nxt]
            elif colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def describe(cycle: list[str], graph) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_no_import_cycle_among_planner_modules():
    graph = import_graph()
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100  # the graph really was read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + describe(cycle, graph)


def test_the_cycle_finder_finds_a_cycle_and_reports_its_path():
    # a deliberately cyclic graph (what a -> b -> c -> a in planner/ would look like)
    g = {"a": {"b": 3}, "b": {"c": 5}, "c": {"a": 7}, "d": {"a": 1}}
    cyc = find_cycle(g)
    assert cyc == ["a", "b", "c", "a"]
    assert describe(cyc, g) == "a (line 3) -> b (line 5) -> c (line 7) -> a"
    assert find_cycle({"a": {"b": 1}, "b": {}, "c": {"a": 2, "b": 3}}) is None


def test_function_level_and_relative_imports_are_edges(tmp_path):
    # the parser sees an import inside a function and a relative import, and skips TYPE_CHECKING
    pkg = tmp_path / "planner" / "x"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    f = pkg / "m.py"
    f.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from planner import cli\n"
                 "def g():\n    from planner.store import db\n    return db\nfrom . import n\n")
    mods = {"planner", "planner.cli", "planner.store", "planner.store.db", "planner.x", "planner.x.m",
            "planner.x.n"}
    assert imports_of("planner.x.m", f, mods) == {"planner.store.db": 5, "planner.store": 5, "planner.x.n": 7}


def test_a_package_s_init_is_an_edge(tmp_path):
    # the cycle schema -> planner.replay.hooks -> planner/replay/__init__ (re-exporting engine) ->
    # engine -> config -> schema only shows with the package as an edge
    f = tmp_path / "planner" / "s.py"
    f.parent.mkdir()
    f.write_text("from planner.replay.hooks import CADENCES\n")
    mods = {"planner", "planner.replay", "planner.replay.hooks", "planner.s"}
    assert imports_of("planner.s", f, mods) == {"planner.replay.hooks": 1, "planner.replay": 1}
    g = {"s": {"replay.hooks": 1, "replay": 1}, "replay": {"replay.engine": 1}, "replay.engine": {"s": 2},
         "replay.hooks": {}}
    assert find_cycle(g) == ["replay", "replay.engine", "s", "replay"]


LAZY = re.compile(r"#\s*lazy:\s*(heavy|CLI start-up|cycle)\b.*\S")


def function_level_imports(path) -> list[tuple[int, str]]:
    """(line, text) of every import statement inside a function of `path`."""
    tree = parse(path)
    lines = path.read_text().splitlines()
    out = []
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(f):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    out.append((node.lineno, " ".join(lines[node.lineno - 1:node.end_lineno])))
    return sorted(set(out))


def test_every_function_level_import_says_why_it_is_lazy():
    # the import graph is a DAG even with them (test above): a lazy import never breaks a cycle
    # here, it only keeps a heavy library (or an extra 0.1 s of every command) out of start-up
    found, bad = 0, []
    for path in planner_modules().values():
        for line, text in function_level_imports(path):
            found += 1
            if not LAZY.search(text):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {text.strip()}")
    assert found >= 5  # the parser really saw them (Pyomo, scikit-survival, Dask stay lazy)
    assert not bad, ("a function-level import without '# lazy: heavy|CLI start-up|cycle (why)': move it to the "
                     "top of the module, or say why it must wait:\n" + "\n".join(bad))


def test_the_lazy_import_check_fails_on_an_unmarked_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    import json\n    import pyomo.environ as pyo  # lazy: heavy (pyomo)\n")
    texts = [t for _, t in function_level_imports(f)]
    assert [bool(LAZY.search(t)) for t in texts] == [False, True]


def test_the_root_of_planner_holds_only_the_entry_points():
    root = {p.stem for p in PLANNER.glob("*.py")}
    assert root == ROOT_MODULES, f"not an entry point, move it into a folder: {sorted(root - ROOT_MODULES)}"


def test_every_folder_is_a_package_with_a_docstring():
    folders = sorted(d for d in PLANNER.rglob("*") if d.is_dir() and "__pycache__" not in d.parts
                     and any(d.glob("*.py")))
    assert len(folders) >= 10
    for d in folders:
        init = d / "__init__.py"
        assert init.exists(), f"{d.relative_to(ROOT)} has modules but no __init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and len(doc) > 20, f"{init.relative_to(ROOT)} has no docstring saying what the folder holds"


APP_ONLY = ("streamlit", "plotly", "appkit", "app_pages")


def test_no_planner_module_imports_streamlit_plotly_or_the_app():
    # every import statement of the library, module level and inside functions (the app's pages
    # and appkit/ are the only places that may import Streamlit or Plotly)
    bad = []
    for name, path in planner_modules().items():
        for node in ast.walk(parse(path)):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad += [f"{name} (line {node.lineno}): {m}" for m in mods if m.split(".")[0] in APP_ONLY]
    assert not bad, bad


def test_import_planner_works_without_streamlit():
    code = ("import sys, planner, planner.cli; "
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {APP_ONLY!r}); "
            "print(bad[:8]); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", "import planner"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_test_file_names_are_unique_across_the_tiers():
    # tests/ has no __init__.py (pytest's default import mode): two test files with one name in
    # unit/, app/ and e2e/ break collection of the whole suite. Name a file after what it tests
    # and its folder's subject (app/test_page_idle.py, unit/test_idle_views.py).
    tests = ROOT / "tests"
    names = [p.name for p in tests.rglob("test_*.py") if "corpus" not in p.parts]
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"test files with the same name in two folders: {dup}"
    assert not list(tests.glob("test_*.py")), "tests go into tests/unit, tests/app or tests/e2e"
