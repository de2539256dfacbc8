"""Grid files: parse and check `{"base": {...}, "grid": {...}}`, resolve the cells.

Bounded whatever the input: the file is at most MAX_GRID_BYTES, YAML aliases and nesting are
capped while composing (a "billion laughs" file is refused before anything is built), every
value in `base` and `grid` is a scalar, the number of cells is counted before the product is
built and refused above `max_cells` (MAX_CELLS by default, the one cap of the CLI and the app),
and a workload path must be a regular file of at most MAX_WORKLOAD_BYTES.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from planner.errors import InputError
from planner.scenario.record import Scenario
from planner.scenario.schema import FIELDS
from planner.workload import generators
from planner.workload.generators import MAX_WORKLOAD_BYTES  # a Trainer CSV's size limit (one place)

MAX_CELLS = 200                       # cells of one sweep unless the caller raises it (--max-cells)
MAX_GRID_BYTES = 1 << 20              # a grid file of 1 MiB is far more than any real grid
MAX_YAML_ALIASES = 100                # alias nodes (*name) in one grid file
MAX_YAML_DEPTH = 20                   # nesting of mappings/sequences in one grid file

IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
SCALARS = (str, int, float, bool, type(None))


@dataclass
class Cell:
    index: int
    key: str
    params: dict[str, Any]      # the fully resolved scenario (all fields)
    overrides: dict[str, Any]   # this cell's grid values


@dataclass
class Grid:
    base: dict[str, Any]
    grid: dict[str, list]       # option (underscores) -> values, in file order
    file: str | None = None
    cells: list[Cell] = field(default_factory=list)  # filled by resolve()

    @property
    def options(self) -> list[str]:
        return list(self.grid)

    def size(self) -> int:
        """How many combinations the grid has (counted, not built)."""
        return math.prod(len(v) for v in self.grid.values())

    def combos(self) -> list[dict[str, Any]]:
        """The grid's cells as override dicts (cartesian product, last option fastest)."""
        names = list(self.grid)
        return [dict(zip(names, vals)) for vals in itertools.product(*self.grid.values())]


def scenario_fields() -> list[str]:
    """Option names a grid may use: the scenario fields (planner.scenario.schema)."""
    return [f.name for f in FIELDS]


def norm(name: Any) -> str:
    return str(name).strip().replace("-", "_")


def one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split())
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def describe(combo: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in combo.items()) or "base"


# ------------------------------------------------------------------------------ reading files

class _TooBig(Exception):
    def __init__(self, msg: str, line: int):
        super().__init__(msg)
        self.msg, self.line = msg, line


def _bounded_loader():
    """A yaml.SafeLoader that refuses too many aliases or too deep nesting while composing."""
    class BoundedLoader(yaml.SafeLoader):
        aliases = 0
        depth = 0

        def compose_node(self, parent, index):
            mark = self.peek_event().start_mark
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > MAX_YAML_ALIASES:
                    raise _TooBig(f"more than {MAX_YAML_ALIASES} YAML aliases", mark.line + 1)
            self.depth += 1
            try:
                if self.depth > MAX_YAML_DEPTH:
                    raise _TooBig(f"YAML nested deeper than {MAX_YAML_DEPTH} levels", mark.line + 1)
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def _yaml_root(text: str):
    loader = _bounded_loader()(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _line_of(text: str, kind: str, section: str, name: str) -> int | None:
    """Best-effort 1-based line of key `name` under `section` in the grid file text."""
    if kind == "yaml":
        try:
            root = _yaml_root(text)
        except Exception:
            return None
        if not isinstance(root, yaml.MappingNode):
            return None
        for k, v in root.value:
            if k.value == section and isinstance(v, yaml.MappingNode):
                for kk, _ in v.value:
                    if kk.value == name:
                        return kk.start_mark.line + 1
        return None
    pat = re.compile(rf'"{re.escape(name)}"\s*:')
    for i, line in enumerate(text.splitlines(), 1):
        if pat.search(line):
            return i
    return None


def _read_text(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        raise InputError("grid file not found", file=str(path)) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError("grid file is not a regular file", file=str(path))
    if st.st_size > MAX_GRID_BYTES:
        raise InputError(f"grid file larger than {MAX_GRID_BYTES >> 10} KiB", file=str(path))
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_GRID_BYTES + 1).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", file=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read grid file: {e.strerror or e}", file=str(path)) from None


def _parse_text(text: str, kind: str, path: Path) -> Any:
    try:
        if kind == "yaml":
            loader = _bounded_loader()(text)
            try:
                return loader.get_single_data()
            finally:
                loader.dispose()
        return json.loads(text)
    except _TooBig as e:
        raise InputError(e.msg, file=str(path), line=e.line) from None
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", file=str(path), line=e.lineno) from None
    except RecursionError:
        raise InputError("nested too deeply", file=str(path)) from None
    except Exception as e:  # yaml.YAMLError
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        msg = getattr(e, "problem", None) or str(e)
        raise InputError(f"not valid YAML: {msg}", file=str(path), line=line) from None


def load_grid(path: str | Path, valid: list[str] | None = None) -> Grid:
    """Read and check a grid file (.json, .yaml, .yml). Bad input -> InputError (one line)."""
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        if not path.exists():
            raise InputError("grid file not found", file=str(path))
        raise InputError("grid file must end in .json, .yaml or .yml", file=str(path))
    text = _read_text(path)
    kind = "yaml" if path.suffix.lower() in (".yaml", ".yml") else "json"
    obj = _parse_text(text, kind, path)
    return parse_grid(obj, file=str(path), valid=valid, text=text, kind=kind)


def parse_grid(obj: Any, file: str | None = None, valid: list[str] | None = None,
               text: str | None = None, kind: str = "json") -> Grid:
    """Check a grid given as a dict. `valid`: allowed option names (default: Scenario fields;
    pass [] to accept any identifier-like name, for custom cell functions)."""
    where = file or "<grid>"
    if valid is None:
        valid = scenario_fields()

    def err(msg, fld=None, section=None, name=None):
        line = _line_of(text, kind, section, name) if (text and section and name) else None
        return InputError(msg, file=where, line=line, field=fld)

    if not isinstance(obj, dict):
        raise err("a grid is a mapping with keys 'base' and 'grid'")
    extra = sorted(set(map(str, obj)) - {"base", "grid"})
    if extra:
        raise err(f"unknown top-level key '{extra[0]}' (expected 'base' and 'grid')", fld=extra[0])
    base_raw = obj.get("base") or {}
    grid_raw = obj.get("grid") or {}
    if not isinstance(base_raw, dict):
        raise err("'base' must be a mapping of option: value", fld="base")
    if not isinstance(grid_raw, dict):
        raise err("'grid' must be a mapping of option: [values]", fld="grid")

    def check_name(section, raw):
        name = norm(raw)
        if not IDENT.match(name):
            raise err(f"bad option name '{raw}'", fld=f"{section}.{raw}", section=section, name=raw)
        if valid and name not in valid:
            raise err(f"unknown option '{raw}' (known: {', '.join(valid)})",
                      fld=f"{section}.{raw}", section=section, name=raw)
        return name

    base: dict[str, Any] = {}
    for raw, val in base_raw.items():
        name = check_name("base", raw)
        if name in base:
            raise err(f"option '{raw}' given twice", fld=f"base.{raw}", section="base", name=raw)
        if not isinstance(val, SCALARS):
            raise err(f"base option '{raw}' must be a single value, not a {type(val).__name__}",
                      fld=f"base.{raw}", section="base", name=raw)
        base[name] = val
    grid: dict[str, list] = {}
    for raw, vals in grid_raw.items():
        name = check_name("grid", raw)
        if name in grid:
            raise err(f"option '{raw}' given twice", fld=f"grid.{raw}", section="grid", name=raw)
        if not isinstance(vals, list) or not vals:
            raise err(f"grid option '{raw}' must be a non-empty list of values",
                      fld=f"grid.{raw}", section="grid", name=raw)
        for v in vals:
            if not isinstance(v, SCALARS):
                raise err(f"grid option '{raw}' has a non-scalar value {v!r}",
                          fld=f"grid.{raw}", section="grid", name=raw)
        grid[name] = list(vals)
    return Grid(base=base, grid=grid, file=file)


def as_grid(grid, valid) -> Grid:
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        return load_grid(grid, valid=valid)
    if isinstance(grid, dict):
        return parse_grid(grid, valid=valid)
    raise InputError(f"a grid is a file path or a mapping, not {type(grid).__name__}")


# ---------------------------------------------------------------------------------- the cells

def jsonable(v):
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, datetime):
        return v.isoformat()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.asdict(v)
    return str(v)


def cell_key(params: dict[str, Any]) -> str:
    """16 hex digits of SHA-256 over the resolved scenario as canonical JSON."""
    blob = json.dumps(params, sort_keys=True, default=jsonable, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_workload_file(workload: str | None) -> None:
    """planner.workload.generators.check_file, at this module's MAX_WORKLOAD_BYTES."""
    generators.check_file(workload, max_bytes=MAX_WORKLOAD_BYTES)


def resolve_scenario(params: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults and validate through Scenario.from_dict; returns all fields as a dict."""
    sc = Scenario.from_dict(dict(params))
    check_workload_file(sc.workload)
    d = dataclasses.asdict(sc)
    return json.loads(json.dumps(d, default=jsonable))  # plain JSON types, stable keys


def check_size(grid: Grid, max_cells: int | None) -> int:
    """The grid's cell count; InputError above `max_cells` (None: no cap), before building any."""
    n = grid.size()
    if max_cells is not None and n > max_cells:
        raise InputError(f"the grid has {n:,} cells, more than the cap of {max_cells:,} "
                         f"(raise it with --max-cells N)", file=grid.file, field="grid")
    return n


def resolve(grid: Grid, resolver: Callable[[dict], dict] | None = None,
            max_cells: int | None = None) -> list[Cell]:
    """The grid's distinct cells, resolved. A value the scenario rejects -> InputError."""
    resolver = resolver or resolve_scenario
    check_size(grid, max_cells)
    cells: list[Cell] = []
    seen: set[str] = set()
    for i, combo in enumerate(grid.combos()):
        merged = {**grid.base, **combo}
        try:
            params = resolver(merged)
        except InputError as e:
            bad = e.field or ""
            sect = "grid" if bad in combo else "base"
            raise InputError(f"cell {i} ({describe(combo)}): {e}", file=grid.file or "<grid>",
                             field=f"{sect}.{bad}" if bad else None) from None
        except (TypeError, ValueError) as e:
            raise InputError(f"cell {i} ({describe(combo)}): {e}",
                             file=grid.file or "<grid>") from None
        key = cell_key(params)
        if key in seen:
            continue
        seen.add(key)
        cells.append(Cell(index=i, key=key, params=params, overrides=combo))
    grid.cells = cells
    return cells
