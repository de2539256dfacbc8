"""Figures of the study scripts: one PNG per Plotly figure (kaleido if installed, else a
headless Chromium screenshot) and one HTML page holding all of them."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path


def write_figures(figs: dict, img_dir: Path, html_name: str, title: str, log) -> list[str]:
    """Write img_dir/<name>.png per figure and img_dir/html_name; return the PNG names written."""
    img_dir.mkdir(parents=True, exist_ok=True)
    html = [f"<html><head><meta charset='utf-8'><title>{title}</title></head><body>"]
    for i, fig in enumerate(figs.values()):
        html.append(fig.to_html(full_html=False, include_plotlyjs="cdn" if i == 0 else False))
    html.append("</body></html>")
    (img_dir / html_name).write_text("\n".join(html))
    written = []
    try:
        import kaleido  # noqa: F401

        for name, fig in figs.items():
            fig.write_image(str(img_dir / f"{name}.png"))
            written.append(f"{name}.png")
        return written
    except Exception:  # noqa: BLE001 - no kaleido (or it failed): try a browser
        written = []
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if not browser:
        log(f"no kaleido and no Chromium: figures only in {img_dir / html_name}")
        return written
    with tempfile.TemporaryDirectory() as tmp:
        for name, fig in figs.items():
            page = Path(tmp) / f"{name}.html"
            fig.write_html(str(page), include_plotlyjs=True, full_html=True, config={"staticPlot": True})
            png = img_dir / f"{name}.png"
            cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   f"--window-size={fig.layout.width},{fig.layout.height}", f"--screenshot={png}",
                   "--virtual-time-budget=5000", page.as_uri()]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                ok = p.returncode == 0 and png.exists()
            except subprocess.TimeoutExpired:
                ok = False
            if ok:
                written.append(png.name)
            else:
                log(f"screenshot of {name} failed")
    return written


def publish(name: str, out, text: str, figs, doc: Path, marker: str, title: str, no_doc: bool,
            art_dir: Path | None = None) -> None:
    """The end of every paper study: save `out` as artifacts/<name>.json, print the table `text`,
    and (unless no_doc) put it between doc's <!-- MARKER:BEGIN/END --> and draw the figures.
    `figs` is a function out -> {png name: Plotly figure} (called only when drawing)."""
    import json

    art = art_dir or doc.parent.parent / "artifacts"
    art.mkdir(exist_ok=True)
    (art / f"{name}.json").write_text(json.dumps(out, indent=1))
    print(text)
    if no_doc:
        return
    begin, end = f"<!-- {marker}:BEGIN -->", f"<!-- {marker}:END -->"
    body = doc.read_text()
    if begin in body and end in body:
        head, rest = body.split(begin, 1)
        doc.write_text(head + begin + "\n" + text + "\n" + end + rest.split(end, 1)[1])
    write_figures(figs(out), doc.parent / "img", f"{name}_figures.html", title, print)
