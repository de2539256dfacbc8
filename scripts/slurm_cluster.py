#!/usr/bin/env python3
"""A real Slurm test cluster on one host: one slurmctld and one `slurmd -N nodeK` per emulated node.

    python scripts/slurm_cluster.py start --dir D [--nodes 8] [--partitions batch:1-6,gpu:7-8]
        [--cpus 2] [--wait 60] [--accounting] [--jwt]
                                     prints JSON {dir, conf, env, nodes, partitions, pids}
    python scripts/slurm_cluster.py stop --dir D     stops every daemon it started (pid files)
    python scripts/slurm_cluster.py status --dir D   sinfo of the cluster

Debian's slurmctld/slurmd/slurm-client (Slurm 22.05) as packaged: every node is its own slurmd with
NodeHostname = this host, NodeAddr=127.0.0.1, its own Port and %n in the spool, pid and log paths.
AuthType=auth/none and CredType=cred/none (22.05 accepts both): no munge key is needed, so the
cluster is for tests on this host only (never expose its ports). The job completion log
(jobcomp/filetxt) is kept in D/jobcomp.txt.

Accounting: without --accounting there is no accounting database (accounting_storage/none), so
`sacct` fails as it does on sites without slurmdbd. With --accounting (Debian's `slurmdbd` and
`mariadb-server`) a private MariaDB is made in D/mysql (`mariadb-install-db`, its own port on
127.0.0.1, --skip-grant-tables: test only) and a slurmdbd (accounting_storage/mysql) serves the
cluster, so `sacct --json` prints the controller's real records (RESIZING included); about 5 s
more at start.

Use the returned `env` (SLURM_CONF=D/slurm.conf) for every client command. `stop` kills by the pid
files written under D/run, never by name: other clusters on the machine are left alone.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SBIN = ("/usr/sbin", "/usr/bin")


def _which(name: str) -> str | None:
    return shutil.which(name) or next((f"{d}/{name}" for d in SBIN if os.access(f"{d}/{name}", os.X_OK)), None)


def available() -> bool:
    """True when slurmctld, slurmd and the client commands are installed."""
    return all(_which(n) for n in ("slurmctld", "slurmd", "sinfo", "squeue", "scontrol", "sbatch"))


def jwt_available() -> bool:
    """True when Slurm's auth/jwt plugin is installed (Debian: slurm-wlm-jwt-plugin)."""
    import glob

    return bool(glob.glob("/usr/lib/*/slurm-wlm/auth_jwt.so") or glob.glob("/usr/lib*/slurm*/auth_jwt.so"))


def accounting_available() -> bool:
    """True when slurmdbd, sacct(mgr) and MariaDB's server are installed (for --accounting)."""
    return all(_which(n) for n in ("slurmdbd", "sacct", "sacctmgr", "mariadbd", "mariadb-install-db"))


def _free_port_block(n: int, lo: int = 20000, hi: int = 60000) -> int:
    """The first port of n consecutive ports that are free on 127.0.0.1 (probed by binding)."""
    import random
    rng = random.Random(os.getpid() ^ int(time.time()))
    for _ in range(200):
        base = rng.randrange(lo, hi - n)
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def parse_partitions(text: str, nodes: int) -> list[tuple[str, int, int]]:
    """'batch:1-6,gpu:7-8' -> [(name, first, last)] (1-based node numbers); '' -> one 'batch' with all."""
    if not text:
        return [("batch", 1, nodes)]
    out = []
    for part in text.split(","):
        name, _, rng = part.partition(":")
        a, _, b = rng.partition("-")
        first, last = int(a), int(b or a)
        if not (1 <= first <= last <= nodes) or not name.isidentifier():
            raise SystemExit(f"slurm_cluster: bad partition {part!r} (name:first-last within 1..{nodes})")
        out.append((name, first, last))
    return out


def write_conf(d: Path, nodes: int, partitions, cpus: int, accounting: bool = False, jwt: bool = False) -> dict:
    host = socket.gethostname()
    for sub in ("state", "spool", "run", "log"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    # one block: the controller's port, one per node, then slurmdbd's and MariaDB's
    ctld_port = _free_port_block(nodes + 3)
    node_port = ctld_port + 1
    dbd_port, db_port = ctld_port + nodes + 1, ctld_port + nodes + 2
    cluster = f"hp{os.getpid() % 100000}"
    lines = [
        f"ClusterName={cluster}",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        "AuthType=auth/none",
        *(["AuthAltTypes=auth/jwt", f"AuthAltParameters=jwt_key={d}/state/jwt.key"] if jwt else []),
        "CredType=cred/none",
        f"SlurmUser={getpass.getuser()}",
        f"SlurmdUser={getpass.getuser()}",
        f"StateSaveLocation={d}/state",
        f"SlurmdSpoolDir={d}/spool/%n",
        f"SlurmctldPidFile={d}/run/slurmctld.pid",
        f"SlurmdPidFile={d}/run/slurmd-%n.pid",
        f"SlurmctldLogFile={d}/log/slurmctld.log",
        f"SlurmdLogFile={d}/log/slurmd-%n.log",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        "ProctrackType=proctrack/pgid",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=sched_interval=1,bf_interval=1",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ReturnToService=2",
        *(["AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=127.0.0.1",
           f"AccountingStoragePort={dbd_port}"] if accounting else ["AccountingStorageType=accounting_storage/none"]),
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/filetxt",
        f"JobCompLoc={d}/jobcomp.txt",
        "SlurmdTimeout=30",
        "SlurmctldTimeout=30",
        "MessageTimeout=10",
        "InactiveLimit=0",
        "MinJobAge=300",
        "KillWait=2",
        "Waittime=0",
        f"NodeName=node[1-{nodes}] NodeHostname={host} NodeAddr=127.0.0.1 "
        f"Port={node_port}-{node_port + nodes - 1} CPUs={cpus} RealMemory=1000 State=UNKNOWN",
    ]
    for i, (name, a, b) in enumerate(partitions):
        lines.append(f"PartitionName={name} Nodes=node[{a}-{b}] Default={'YES' if i == 0 else 'NO'} "
                     "MaxTime=INFINITE State=UP OverSubscribe=NO")
    if jwt:  # the HS256 key `scontrol token` signs with (readable by the slurm user only)
        key = d / "state" / "jwt.key"
        key.write_bytes(os.urandom(32))
        os.chmod(key, 0o600)
    conf = d / "slurm.conf"
    conf.write_text("\n".join(x for x in lines if x) + "\n")
    (d / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\n")
    if accounting:  # slurmdbd.conf sits beside slurm.conf (SLURM_CONF's folder), mode 600
        dbd = d / "slurmdbd.conf"
        dbd.write_text("\n".join([
            "AuthType=auth/none", "DbdHost=localhost", "DbdAddr=127.0.0.1", f"DbdPort={dbd_port}",
            f"SlurmUser={getpass.getuser()}", "DebugLevel=info", f"LogFile={d}/log/slurmdbd.log",
            f"PidFile={d}/run/slurmdbd.pid", "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
            f"StoragePort={db_port}", "StorageUser=root", "StorageLoc=slurm_acct_db"]) + "\n")
        os.chmod(dbd, 0o600)
    return {"conf": str(conf), "ctld_port": ctld_port, "node_port": node_port, "host": host, "cluster": cluster,
            "dbd_port": dbd_port if accounting else None, "db_port": db_port if accounting else None}


MARIADB_OPTS = ("--no-defaults", "--innodb-log-file-size=4M", "--innodb-buffer-pool-size=16M")


def start_accounting(d: Path, db_port: int, cluster: str, wait: float = 30.0) -> None:
    """A private MariaDB in d/mysql and slurmdbd on it; the cluster registered (sacctmgr)."""
    data = d / "mysql"
    user = ["--user=root"] if os.geteuid() == 0 else []
    if not (data / "mysql").exists():
        r = subprocess.run([_which("mariadb-install-db"), *MARIADB_OPTS, f"--datadir={data}", *user,
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {_last(r.stderr or r.stdout)}")
    sock = d / "run" / "mysqld.sock"
    log = open(d / "log" / "mariadbd.log", "w")
    subprocess.Popen([_which("mariadbd"), *MARIADB_OPTS, f"--datadir={data}", *user, f"--socket={sock}",
                      f"--port={db_port}", "--bind-address=127.0.0.1", "--skip-grant-tables",
                      f"--pid-file={d}/run/mariadbd.pid"], stdout=log, stderr=subprocess.STDOUT,
                     start_new_session=True)
    end = time.time() + wait
    while not sock.exists():
        if time.time() > end:
            why = _last((d / "log" / "mariadbd.log").read_text())
            raise RuntimeError(f"MariaDB made no socket in {wait:g} s: {why}")
        time.sleep(0.05)
    subprocess.run([_which("slurmdbd")], env=_run_env(d), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=60)
    while True:  # slurmdbd answers once it has made its tables
        r = subprocess.run(["sacctmgr", "-i", "add", "cluster", cluster], env=_run_env(d), capture_output=True,
                           text=True, timeout=30)
        if r.returncode == 0 or "already exists" in (r.stdout + r.stderr).lower():
            return
        if time.time() > end:
            raise RuntimeError(f"slurmdbd did not register the cluster in {wait:g} s: {_last(r.stderr or r.stdout)}")
        time.sleep(0.2)


def _last(text: str) -> str:
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def env_for(d: Path) -> dict:
    return {"SLURM_CONF": str(Path(d) / "slurm.conf")}


def _run_env(d: Path) -> dict:
    e = dict(os.environ)
    e.update(env_for(d))
    return e


def start_ctld(d: Path) -> None:
    subprocess.run([_which("slurmctld"), "-f", str(d / "slurm.conf"), "-i"], env=_run_env(d), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)


def start_slurmd(d: Path, name: str) -> None:
    subprocess.run([_which("slurmd"), "-f", str(d / "slurm.conf"), "-N", name], env=_run_env(d),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)


def rest_dir(d: Path) -> Path:
    """slurmrestd's folder: outside d (which may sit in a private tmp folder), readable by the user
    slurmrestd runs as; named after d."""
    import hashlib
    import tempfile

    return Path(tempfile.gettempdir()) / f"hp-rest-{hashlib.sha1(str(Path(d).resolve()).encode()).hexdigest()[:12]}"


def start_rest(d: Path, wait: float = 20.0, jwt: bool = False) -> str:
    """slurmrestd, as user nobody when run by root (slurmrestd refuses root), the v0.0.38 plugin.
    Default: on a UNIX socket (rest_auth/local), returns 'unix:<socket>'. jwt=True (a cluster
    started with jwt): on a free TCP port of 127.0.0.1 with rest_auth/jwt, so every request needs
    X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (a token of `scontrol token`); returns
    'http://127.0.0.1:<port>'. (The test cluster's AuthType is auth/none: slurmrestd insists on
    the token, slurmctld does not check its signature.)"""
    d = Path(d).resolve()
    exe = _which("slurmrestd")
    if exe is None:
        raise RuntimeError("slurmrestd is not installed (apt-get install slurmrestd)")
    rd = rest_dir(d)
    rd.mkdir(exist_ok=True)
    shutil.copy(d / "slurm.conf", rd / "slurm.conf")
    os.chmod(rd / "slurm.conf", 0o644)
    sock = rd / "rest.sock"
    if jwt:
        port = _free_port_block(1)
        where, stem, auth = f"127.0.0.1:{port}", "slurmrestd-jwt", "rest_auth/jwt"
    else:
        where, stem, auth = f"unix:{sock}", "slurmrestd", "rest_auth/local"
    argv = [exe, "-f", str(rd / "slurm.conf"), "-a", auth, "-s", "openapi/v0.0.38", where]
    if os.geteuid() == 0:
        os.chmod(rd, 0o777)
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
    log = open(d / "log" / f"{stem}.log", "w")
    env = dict(_run_env(d), SLURM_CONF=str(rd / "slurm.conf"))
    p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (d / "run" / f"{stem}.pid").write_text(f"{p.pid}\n")

    def up() -> bool:
        if not jwt:
            return sock.exists()
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    end = time.time() + wait
    while time.time() < end and not up():
        if p.poll() is not None:
            raise RuntimeError("slurmrestd exited: " + (d / "log" / f"{stem}.log").read_text()[-500:])
        time.sleep(0.1)
    if not up():
        raise RuntimeError(f"slurmrestd is not listening on {where} after {wait:g} s")
    return f"http://{where}" if jwt else where


def pids(d: Path) -> dict:
    out = {}
    for f in sorted((Path(d) / "run").glob("*.pid")):
        try:
            out[f.stem] = int(f.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _is_ours(pid: int, d: Path) -> bool:
    """The process's command line names this cluster's directory (its slurm.conf, MariaDB's data,
    or slurmrestd's socket), or its environment has SLURM_CONF in it (slurmdbd): the guard against
    a reused pid."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        if f"{d}/" in cmd or f"{rest_dir(d)}/" in cmd:
            return True
        return f"SLURM_CONF={d}/slurm.conf".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def kill_daemon(d: Path, stem: str, sig=signal.SIGTERM, wait: float = 10.0) -> bool:
    """Signal one daemon of this cluster by its pid file (e.g. 'slurmctld', 'slurmd-node3')."""
    pid = pids(d).get(stem)
    if pid is None or not _alive(pid) or not _is_ours(pid, d):
        return False
    os.kill(pid, sig)
    end = time.time() + wait
    while time.time() < end and _alive(pid):
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    return True


def sinfo_counts(d: Path) -> dict:
    r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=_run_env(d), capture_output=True, text=True,
                       timeout=30)
    out = {}
    for line in r.stdout.split("\n"):
        if line.strip():
            n, s = line.split()
            out[n] = s
    return out


def wait_ready(d: Path, nodes: int, timeout: float) -> None:
    end = time.time() + timeout
    last = {}
    while time.time() < end:
        try:
            last = sinfo_counts(d)
        except subprocess.TimeoutExpired:
            last = {}
        up = [s for s in last.values() if s.rstrip("*~#!%$@^-") in ("idle", "alloc", "mix")]
        if len(up) >= nodes and not any(s.endswith("*") for s in last.values()):
            return
        time.sleep(0.5)
    raise RuntimeError(f"cluster not ready after {timeout:.0f} s: {sorted(set(last.values()))}")


def start(d: Path, nodes: int, partitions_text: str = "", cpus: int = 2, wait: float = 90.0,
          accounting: bool = False, jwt: bool = False) -> dict:
    """Start a cluster in d (with slurmdbd on a private MariaDB when accounting); returns its
    description. Stops what it started when it fails."""
    if not available():
        raise RuntimeError("Slurm is not installed (slurmctld, slurmd, slurm-client)")
    if accounting and not accounting_available():
        raise RuntimeError("accounting needs slurmdbd and mariadb-server (apt-get install slurmdbd mariadb-server)")
    d = Path(d).resolve()
    d.mkdir(parents=True, exist_ok=True)
    parts = parse_partitions(partitions_text, nodes)
    info = write_conf(d, nodes, parts, cpus, accounting, jwt)
    try:
        if accounting:
            start_accounting(d, info["db_port"], info["cluster"])
        start_ctld(d)
        for k in range(1, nodes + 1):
            start_slurmd(d, f"node{k}")
        wait_ready(d, nodes, wait)
    except BaseException:
        stop(d)
        raise
    return {"dir": str(d), "conf": info["conf"], "env": env_for(d), "nodes": [f"node{k}" for k in range(1, nodes + 1)],
            "partitions": {n: [f"node{k}" for k in range(a, b + 1)] for n, a, b in parts},
            "ctld_port": info["ctld_port"], "cluster": info["cluster"], "accounting": accounting, "jwt": jwt,
            "pids": pids(d)}


def stop(d: Path) -> list[str]:
    """Stop every daemon of the cluster in d (slurmds first, then slurmctld); returns what it stopped."""
    d = Path(d).resolve()
    stopped = []
    ps = pids(d)
    for stem, pid in ps.items():  # all slurmds (and slurmrestd) at once, then wait
        if stem not in ("slurmctld", "slurmdbd", "mariadbd") and _alive(pid) and _is_ours(pid, d):
            os.kill(pid, signal.SIGTERM)
            stopped.append(stem)
    end = time.time() + 15
    for stem in stopped:
        while time.time() < end and _alive(ps[stem]):
            time.sleep(0.05)
        if _alive(ps[stem]):
            os.kill(ps[stem], signal.SIGKILL)
    if kill_daemon(d, "slurmctld"):
        stopped.append("slurmctld")
    for stem in ("slurmdbd", "mariadbd"):  # the accounting last: slurmctld flushes to it on the way down
        if kill_daemon(d, stem, wait=20.0):
            stopped.append(stem)
    shutil.rmtree(rest_dir(d), ignore_errors=True)
    # job processes left by slurmstepd (sleep ...) of this cluster
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and _is_ours(int(p.name), d):
            try:
                os.kill(int(p.name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return stopped


class Driver:
    """Submits, resizes and cancels jobs, drains and reserves nodes on the cluster in d (for tests)."""

    def __init__(self, d):
        self.d = Path(d)
        self.env = _run_env(self.d)

    def sh(self, *argv, check: bool = True) -> str:
        r = subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.stdout.strip()}")
        return r.stdout.strip()

    def submit(self, nodes: int, seconds: int = 600, partition: str = "batch", name: str = "drv",
               nodelist: str | None = None) -> str:
        argv = ["sbatch", "--parsable", "--exclusive", f"--nodes={nodes}", f"--partition={partition}",
                f"--job-name={name}", f"--chdir={self.d}", f"--output={self.d}/log/job-%j.out"]
        if nodelist:
            argv.append(f"--nodelist={nodelist}")
        argv.append(f"--wrap=sleep {int(seconds)}")
        return self.sh(*argv).split(";")[0]

    def job(self, job_id: str) -> dict:
        doc = json.loads(self.sh("squeue", "--json"))
        return next((j for j in doc["jobs"] if str(j["job_id"]) == str(job_id)), {})

    def wait_state(self, job_id: str, state: str, timeout: float = 30.0) -> dict:
        end = time.time() + timeout
        while time.time() < end:
            j = self.job(job_id)
            if (j.get("job_state") or "") == state or (state == "GONE" and not j):
                return j
            time.sleep(0.2)
        raise RuntimeError(f"job {job_id} not {state} after {timeout} s: {self.job(job_id).get('job_state')}")

    def resize(self, job_id: str, nodes: int) -> None:
        self.sh("scontrol", "update", f"JobId={job_id}", f"NumNodes={nodes}")

    def cancel(self, job_id: str) -> None:
        self.sh("scancel", str(job_id))

    def drain(self, node: str, reason: str = "test") -> None:
        self.sh("scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")

    def resume(self, node: str) -> None:
        self.sh("scontrol", "update", f"NodeName={node}", "State=RESUME")

    def reserve(self, name: str, nodes: str, maint: bool = False) -> None:
        argv = ["scontrol", "create", "reservation", f"ReservationName={name}", f"Nodes={nodes}",
                "StartTime=now", "Duration=60", "Users=root"]
        if maint:
            argv.append("Flags=MAINT")
        self.sh(*argv)

    def unreserve(self, name: str) -> None:
        self.sh("scontrol", "delete", f"ReservationName={name}", check=False)

    def node_states(self) -> dict:
        return sinfo_counts(self.d)

    def wait_nodes(self, pred, timeout: float = 30.0) -> dict:
        end = time.time() + timeout
        st = {}
        while time.time() < end:
            st = self.node_states()
            if pred(st):
                return st
            time.sleep(0.2)
        raise RuntimeError(f"node states not as expected after {timeout} s: {st}")

    def save_state(self, job_id: str, timeout: float = 30.0) -> float:
        """Have slurmctld write its job state file now and wait until it did (returns the seconds
        waited). slurmctld (22.05) persists a job's START only with its next state save, which a job
        start does not ask for (a submission, an update or a completion does) and which is throttled
        to one every 5 s (SAVE_MAX_WAIT, src/slurmctld/state_save.c). A SIGKILL before that save
        forgets the start: after the restart the job is PENDING again, is started a second time on
        a node where its first instance still runs, and Slurm drains that node ("Duplicate jobid").
        An update of the job (its Comment) asks for the save; any save after this call began holds
        every job's current state."""
        js = self.d / "state" / "job_state"
        t0 = time.time()
        self.sh("scontrol", "update", f"JobId={job_id}", "Comment=hp-state-saved")
        while not (js.exists() and js.stat().st_mtime > t0):
            if time.time() - t0 > timeout:
                raise RuntimeError(f"slurmctld wrote no job state within {timeout:g} s")
            time.sleep(0.05)
        return time.time() - t0

    def token(self, lifespan_s: int = 600) -> str:
        """A JWT of `scontrol token` (a cluster started with jwt)."""
        out = self.sh("scontrol", "token", f"lifespan={int(lifespan_s)}")
        return out.split("SLURM_JWT=", 1)[1].strip()

    def kill_ctld(self) -> None:
        kill_daemon(self.d, "slurmctld", signal.SIGKILL)

    def start_ctld(self) -> None:
        start_ctld(self.d)

    def ensure_ctld(self) -> None:
        """Start slurmctld again if it is not running (a test that killed it and then failed)."""
        pid = pids(self.d).get("slurmctld")
        if pid is None or not _alive(pid) or not _is_ours(pid, self.d):
            start_ctld(self.d)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("--dir", required=True)
    s.add_argument("--nodes", type=int, default=8)
    s.add_argument("--partitions", default="", help="name:first-last,... (1-based node numbers)")
    s.add_argument("--cpus", type=int, default=2)
    s.add_argument("--wait", type=float, default=90.0)
    s.add_argument("--accounting", action="store_true", help="slurmdbd on a private MariaDB (sacct works)")
    s.add_argument("--jwt", action="store_true", help="AuthAltTypes=auth/jwt (scontrol token; slurmrestd with JWT)")
    for name in ("stop", "status"):
        p = sub.add_parser(name)
        p.add_argument("--dir", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "start":
        t0 = time.time()
        info = start(Path(a.dir), a.nodes, a.partitions, a.cpus, a.wait, a.accounting, a.jwt)
        info["start_s"] = round(time.time() - t0, 2)
        print(json.dumps(info))
    elif a.cmd == "stop":
        print(json.dumps({"stopped": stop(Path(a.dir))}))
    else:
        print(json.dumps(sinfo_counts(Path(a.dir))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
