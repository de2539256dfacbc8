"""A GPU trace's labels in GPUs (planner.report.glossary.in_units, appkit.charts.in_units) and the pure
parts of the shared time zoom (appkit.charts.box_x_range, with_x_range). Issue 25."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pytest

from appkit import charts
from planner.report.glossary import in_units


@pytest.mark.parametrize("text, gpu", [
    ("idle node-hours (node-h)", "idle GPU-hours (GPU-h)"),
    ("Idle nodes N(t)", "Idle GPUs N(t)"),
    ("Node-hours per week", "GPU-hours per week"),
    ("a 1-node job, 2-3 nodes", "a 1-GPU job, 2-3 GPUs"),
    ("by idle node-time", "by idle GPU-time"),
    ("node identity", "GPU identity"),
    # not whole words: left alone
    ("hostnode7 nodelist node_identity Nmin", "hostnode7 nodelist node_identity Nmin"),
    # code: a CLI option, a `...` span
    ("used by --node-choice predicted, per node", "used by --node-choice predicted, per GPU"),
    ("`planner fragments --log L` counts nodes", "`planner fragments --log L` counts GPUs"),
    ("see `node_hours` or `idle nodes`", "see `node_hours` or `idle nodes`"),
])
def test_in_units_words_a_gpu_trace_in_gpus(text, gpu):
    assert in_units(text, "GPU") == gpu
    assert in_units(text, "node") == text  # a node log is unchanged


def test_in_units_passes_non_text_through():
    assert in_units(None, "GPU") is None and in_units(3, "GPU") == 3


def test_figure_in_units_rewrites_labels_not_data():
    fig = go.Figure([go.Bar(x=["node1", "node 2"], y=[1, 2], name="idle nodes",
                            hovertemplate="%{y} node-hours<extra></extra>"),
                     go.Heatmap(z=[[1], [2]], x=["1 h"], y=["1 node", "2-3 nodes"])])
    fig.update_layout(title="Idle node-hours per day", xaxis_title="node", yaxis_title="idle nodes")
    fig.add_annotation(text="every node was held", x=0, y=0)
    out = charts.in_units(fig, "GPU")
    assert out.layout.title.text == "Idle GPU-hours per day"
    assert out.layout.xaxis.title.text == "GPU" and out.layout.yaxis.title.text == "idle GPUs"
    assert out.data[0].name == "idle GPUs" and out.data[0].hovertemplate == "%{y} GPU-hours<extra></extra>"
    assert list(out.data[0].x) == ["node1", "node 2"]  # categories are data: a node's name stays
    assert list(out.data[1].y) == ["1 GPU", "2-3 GPUs"]  # a heatmap's size classes are labels
    assert out.layout.annotations[0].text == "every GPU was held"
    assert charts.in_units(fig, "node") is fig


def test_box_x_range_reads_the_last_box_in_order():
    st_state = {"selection": {"box": [{"x": [1.0, 2.0]}, {"x": [5.5, 3.25], "y": [0, 1]}], "points": []}}
    assert charts.box_x_range(st_state) == (3.25, 5.5)
    dates = {"selection": {"box": [{"x": ["2021-02-11 03:00:00.5", "2021-02-10 21:00"]}]}}
    assert charts.box_x_range(dates) == (pd.Timestamp("2021-02-10 21:00"), pd.Timestamp("2021-02-11 03:00:00.5"))
    for empty in (None, {}, {"selection": {"box": []}}, {"selection": {"box": [{"x": [1.0]}]}}):
        assert charts.box_x_range(empty) is None


def test_with_x_range_sets_or_leaves_the_axis():
    fig = go.Figure(go.Scatter(x=[0, 10], y=[1, 2]))
    assert charts.with_x_range(fig, None).layout.xaxis.range is None
    assert list(charts.with_x_range(fig, (2.0, 4.0)).layout.xaxis.range) == [2.0, 4.0]

