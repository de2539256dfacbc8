"""Every download button of the app passes on_click="ignore" (checked in the source with `ast`).

Streamlit's default (on_click="rerun") reruns the page when a download button is clicked, while the
browser asks for the file: for a deferred file (a callable, built on click: the Downloads page) the
rerun drops the button's registered callable and can remove the file it just built, so the download
sometimes never arrives ("Deferred file ... not found" in the server log; tests/e2e/test_browser.py
failed 1 run in 3-7 on a loaded machine). A download changes nothing on the page: no rerun."""

from __future__ import annotations

import ast

from tests.helpers import ROOT


def _download_calls():
    for path in sorted([*(ROOT / "app_pages").glob("*.py"), *(ROOT / "appkit").glob("*.py"), ROOT / "app.py"]):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "download_button":
                kw = {k.arg: k.value for k in node.keywords}
                on_click = kw.get("on_click")
                yield f"{path.relative_to(ROOT)}:{node.lineno}", (
                    on_click.value if isinstance(on_click, ast.Constant) else None)


def test_every_download_button_ignores_the_click_for_reruns():
    calls = dict(_download_calls())
    assert len(calls) >= 9, calls  # the Downloads page's four, the Idle page's five
    assert {where: v for where, v in calls.items() if v != "ignore"} == {}
