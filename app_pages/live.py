"""Live: a running Slurm read live (read-only): harvestable nodes now per partition, N(t) of the last
hours, grow/shrink recommendations for elastic jobs as they come, and their scores.

The connection settings and the recording belong to the workspace (its meta and its live/ folder):
another workspace sees neither. Polling runs in a fragment that reruns every interval (no full page
rerun) while "Record" is on; the recording becomes a log for the other pages with one button.
"""

import streamlit as st

from appkit import charts, live, session, uploads
from planner.errors import InputError

st.title("Live")
st.caption("Reads a running Slurm through `sinfo --json` / `squeue --json` (or slurmrestd) every interval and records "
           "its **harvestable** nodes: idle, with no drain, reservation, maintenance, power-save or not-responding "
           "flag, in a partition marked harvestable. With elastic jobs declared, the allocator (auto) recommends "
           "target sizes at every change, choosing nodes by the survival model's P(node stays idle >= T_fwd). "
           "Advisory only: nothing is run on the cluster. The same is `planner live` on the command line.")

d = session.ws_dir()
cfg = live.settings(d)
with st.expander("Connection and jobs (this workspace only)", expanded=not cfg.get("saved")):
    with st.form("live_settings"):
        c = st.columns([3, 3, 2, 1])
        conf = c[0].text_input("SLURM_CONF", cfg.get("slurm_conf", ""),
                               help="path of the cluster's slurm.conf; empty: the client's default")
        rest = c[1].text_input("slurmrestd URL", cfg.get("rest", ""),
                               help="read slurmrestd instead of the client commands, e.g. http://host:6820")
        parts = c[2].text_input("Harvestable partitions", cfg.get("partitions", ""), help="comma-separated; empty: all")
        interval = c[3].number_input("Interval (s)", min_value=1, max_value=3600, value=int(cfg.get("interval", 30)))
        jobs = st.text_area("Elastic jobs (JSON, optional)", cfg.get("jobs", ""), height=120,
                            help='{"tfwd_s": 600, "trainers": [{"id": "a", "slurm_job": "42", "model": "resnet18", '
                                 '"nmin": 1, "nmax": 8, "rup_s": 18, "rdw_s": 12}]}')
        if st.form_submit_button("Save", type="primary"):
            try:
                live.save_settings(d, slurm_conf=conf, rest=rest, partitions=parts, interval=int(interval), jobs=jobs)
                st.success("Saved.")
                cfg = live.settings(d)
            except InputError as e:
                st.error(uploads.form_error(str(e)))

recording = st.toggle("Record (poll the cluster)", key="live_record", disabled=not cfg.get("saved"),
                      help="polls every interval while this page is open")


@st.fragment(run_every=float(cfg.get("interval", 30)) if recording else None)
def panel():
    if recording:
        err = live.poll_once(d, cfg)
        if err:
            st.error(err)
    con = live.recording_con(d)
    if con is None:
        st.info("No recording yet: save the connection settings and switch Record on.")
        return
    try:
        last = live.latest(con)
        if last is None:
            st.info("No poll recorded yet.")
            return
        if not last.get("ok") and last.get("message"):
            st.warning(f"Last poll failed: {uploads.md(last['message'])}")
        st.subheader("Harvestable nodes now")
        st.caption(f"at {charts.to_datetime([last['t_s']])[0]:%Y-%m-%d %H:%M:%S} UTC; "
                   f"{last.get('harvestable', 0)} of {last.get('nodes', 0)} nodes harvestable")
        st.dataframe(live.partition_table(last), hide_index=True, key="live_parts")
        series = live.series(con, hours=6.0)
        st.plotly_chart(charts.step_lines(series, "Harvestable nodes per partition, last 6 hours", "nodes", "nodes"),
                        key="live_nt")
        recs = live.recs(con)
        st.subheader("Recommendations")
        if recs.empty:
            st.caption("None yet (declare elastic jobs in the settings; a recommendation comes at a change).")
        else:
            st.caption("Scored once T_fwd has passed: stayed share = added nodes still harvestable after T_fwd; "
                       "regret = best gain knowing which nodes stayed - the gain the move had (samples).")
            st.dataframe(recs, hide_index=True, key="live_recs")
    finally:
        con.close()


panel()

with st.container(border=True):
    c = st.columns([3, 1])
    name = c[0].text_input("Log name for the recording", "live-recording", key="live_export_name")
    if c[1].button("Make a log", key="live_export", help="the recorded snapshots as a log for Idle, Planner, Compare"):
        try:
            out = live.export(d, name)
            st.success(f"Log {out['log']!r} made from {out['polls']} polls: open it on the other pages.")
        except InputError as e:
            st.error(uploads.form_error(str(e)))
