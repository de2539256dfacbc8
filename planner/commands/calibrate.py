"""`planner calibrate`: how well the idle-time model's P(node stays idle >= T) is calibrated on
data after its fitting period (planner.predict.calibration)."""

from __future__ import annotations

from planner.errors import InputError
from planner.idle import fragments as F
from planner.idle.window import Window
from planner.predict.calibration import T_MINS, at_moment, calibrate, pool_sentence
from planner.predict.survival import Fragments
from planner.scenario.schema import FIELD
from planner.store import catalog
from planner.times import format_iso, parse_time

NAME = "calibrate"
HELP = ("calibration of P(node stays idle >= T) on the log after the fitting period: reliability, "
        "expected calibration error, Brier score vs Kaplan-Meier and naive rules, over-prediction")


def add_arguments(p):
    for name in ("db", "log"):  # the same options as `planner simulate`
        p.add_argument(FIELD[name].option, default=None, help=FIELD[name].cli_help())
    p.add_argument("--start", default=None,
                   help="start of the test span: ISO time (naive = UTC) or epoch seconds; the model is fit on "
                        "the log before it (default: after the first 70 %% of the log)")
    p.add_argument("--t-min", default=None, metavar="T[,T...]",
                   help="horizons T in minutes, comma-separated (default 5,15,30,60)")
    p.add_argument("--pool-size", type=int, default=None, help="pool size K (default: all machine nodes)")
    p.add_argument("--seed", type=int, default=0, help="seed of the landmark subsamples")
    p.add_argument("--no-pool", action="store_true", help="skip the pool guarantee (at least k nodes idle)")
    p.add_argument("--at", default=None, metavar="TIME",
                   help="instead of the calibration: the model (fit on the log before TIME) answers at TIME, per "
                        "node idle then P(stays idle >= T) for each T, and for the pool the largest k with "
                        "P(at least k nodes stay idle >= T) >= 0.5, 0.9, 0.99 (ISO time or epoch seconds)")


def _t_mins(text):
    if text is None:
        return T_MINS
    out = []
    for part in str(text).split(","):
        try:
            t = float(part)
        except ValueError:
            raise InputError(f"minutes, comma-separated, got {part.strip()!r}", field="t_min") from None
        if not 0 < t <= 7 * 1440:
            raise InputError(f"each T must be > 0 and <= 10,080 minutes, got {part.strip()}", field="t_min")
        out.append(t)
    return tuple(out)


def run(args):
    t_mins = _t_mins(args.t_min)
    con, log = catalog.open_log(args.db, args.log)
    try:
        fr = Fragments.of(F.characterize(con, Window(log, pool_size=args.pool_size)))
    finally:
        con.close()
    if args.at is not None:
        if args.start is not None:
            raise InputError("--at and --start are two different questions: give one", field="at")
        now = at_moment(fr, parse_time(args.at, field="at"), t_mins, seed=args.seed)
        return {"log": str(log), "fit_start": format_iso(fr.t0), "at": format_iso(now["at_s"]), **now,
                "sentences": [pool_sentence(r) for r in now["pool"]]}
    cut = parse_time(args.start, field="start") if args.start is not None else fr.t0 + 0.7 * (fr.t1 - fr.t0)
    out = calibrate(fr, cut, t_mins, seed=args.seed, pool=not args.no_pool)
    out = {"log": str(log), "fit_start": format_iso(fr.t0), "test_start": format_iso(cut),
           "test_end": format_iso(fr.t1), **out}
    return out
