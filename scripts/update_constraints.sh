#!/usr/bin/env bash
# Regenerate constraints.txt: the whole resolved set of packages, pinned, as `pip freeze` of a
# fresh venv after `pip install -r requirements-dev.txt` (the project itself left out).
# Run it after changing requirements*.txt or pyproject.toml's dependencies:
#   scripts/update_constraints.sh [python3.11]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$PY" -m venv "$tmp/venv"
grep -v '^-e \.' requirements.txt > "$tmp/requirements.txt"
sed 's#^-r requirements.txt#-r '"$tmp"'/requirements.txt#' requirements-dev.txt > "$tmp/requirements-dev.txt"
"$tmp/venv/bin/pip" install --disable-pip-version-check -q -r "$tmp/requirements-dev.txt"
# the project's own dependencies (pyproject.toml) must be in the set too
"$tmp/venv/bin/pip" install --disable-pip-version-check -q --dry-run --report "$tmp/report.json" . >/dev/null
{
    echo "# The whole resolved set of packages, pinned: pip freeze of a fresh Python $("$tmp/venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') venv after"
    echo "#   pip install -r requirements-dev.txt   (minus the project itself)."
    echo "# Use it with every install: pip install -c constraints.txt -r requirements-dev.txt"
    echo "# Regenerate: scripts/update_constraints.sh"
    "$tmp/venv/bin/pip" freeze --exclude-editable | grep -v -i '^harvest-planner'
} > constraints.txt
"$tmp/venv/bin/python" - "$tmp/report.json" <<'PY'
import json, sys
missing = [i["metadata"]["name"] for i in json.load(open(sys.argv[1]))["install"]
           if i["metadata"]["name"].lower() != "harvest-planner"]
if missing:
    sys.exit(f"update_constraints: pyproject dependencies not in requirements*.txt: {', '.join(missing)}")
PY
echo "constraints.txt: $(grep -c '==' constraints.txt) pins"
