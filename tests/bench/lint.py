#!/usr/bin/env python3
"""Benchmark ``mcpeek lint`` on a 1-million-message capture, and what each rule family costs.

    python tests/bench/lint.py [--messages N] [--quick] [--lint-budget S] [--rounds N]
                               [--profile]

A plain script, not a test: it prints figures and asserts nothing about
timing. It writes the realistic modern capture of ``analyze.py`` (tool calls
with progress, tools/list results, MRTR chains, errors, log messages,
list_changed notifications) to a temporary file, then measures:

1. the baseline, in a fresh process: reading the file and
   ``msgspec.json.decode`` of every message's raw text (``analyze.py``'s);
2. ``python -m mcpeek lint --format json CAPTURE > /dev/null`` in a
   subprocess, start-up included: messages per CPU second, as a ratio
   against the baseline, and its peak RSS (VmHWM, polled from /proc). The
   run gets ``--lint-budget`` seconds (default 120; 0: no limit): if it is
   still going then, it is stopped and its rate is taken from how far it had
   read (the read offset of the capture in /proc/<pid>/fdinfo, less half
   the 1 MiB the reader reads ahead), so a slow lint cannot hold the run
   hostage; then the same with every rule ignored (``--ignore`` each): the
   floor that reading, correlation and output set before any rule runs
   (issue #14's target: lint >= 0.4x its floor). Lint and its floor
   alternate for ``--rounds`` rounds (default 3; 1 with ``--quick``), and
   the figure is the median of the rounds' ratios: on a shared 2-core
   machine the floor's CPU time alone swings by 20-30% from run to run, so
   one pair of runs can pass or miss by luck;
3. in this process, over the first ``--family-messages`` messages of the
   same capture (held in memory, so reading is not counted; the capture
   repeats one 16-message slice of traffic, so a prefix costs what the whole
   does per message): the Analyzer alone, the Analyzer with a rule engine
   that runs no rule (the engine's own cost), with one rule family at a time
   (``rules/<family>.py``) and with every rule. A family's cost is
   time(Analyzer + that family) - time(Analyzer alone), in microseconds of
   CPU per message, the best of ``--repeats`` interleaved passes;
   and once more with every rule but the conformance gate off (what it saves);
4. the slowest rules, from one more pass with every rule where each rule's
   hooks are timed where they run (its share of lazy decodes included when
   it is the first to ask for them).

Target: lint at >= 50k msgs/s on one core. ``--quick``: 100k messages.
``--profile`` adds a cProfile of the Analyzer + every rule over the family
prefix.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpeek import rules
from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.capture.reader import CaptureReader
from mcpeek.inspector.records import Msg, Record
from mcpeek.rules.base import Rule
from mcpeek.rules.engine import Reported, RuleEngine

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # the capture generator and the baseline

ROOT = analyze.ROOT
PYTHON = sys.executable
TARGET_RATE = 50_000  # msgs/s on one core for lint
TARGET_FLOOR_RATIO = 0.4  # lint with every rule / lint with none, in the same run (issue #14)
POLL = 0.05  # seconds between /proc samples of the lint process
CHUNK = 1 << 20  # what CaptureReader reads at a time
HOOKS = ("on_message", "on_flow_end", "on_record", "on_conversation_end")


def say(text: str = "") -> None:
    print(text, flush=True)


# -- 2. the lint subprocess -------------------------------------------------------------


def vm_hwm_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


def read_offset(pid: int, path: Path, fds: dict[str, str]) -> int | None:
    """Where ``pid`` has read ``path`` up to (its fd's offset), or None."""
    try:
        if not fds:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                        fds["fd"] = fd
                        break
                except OSError:
                    continue
        if "fd" in fds:
            with open(f"/proc/{pid}/fdinfo/{fds['fd']}") as f:
                for line in f:
                    if line.startswith("pos:"):
                        return int(line.split()[1])
    except OSError:
        pass
    return None


@dataclass
class LintRun:
    code: int
    wall: float
    cpu: float
    peak_kb: int
    messages: float  # messages linted (all of them, or an estimate when stopped)
    stopped: bool
    stderr: str

    @property
    def rate(self) -> float:
        return self.messages / self.cpu


def run_lint(path: Path, count: int, budget: float, *, no_rules: bool = False) -> LintRun:
    """``mcpeek lint`` on ``path``; ``no_rules``: with every rule ignored (its floor)."""
    ignored = [arg for rule in rules.catalog() for arg in ("--ignore", rule)] if no_rules else []
    argv = [PYTHON, "-m", "mcpeek", "lint", "--format", "json", *ignored, str(path)]
    size = path.stat().st_size
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=err, cwd=ROOT)
        peak = 0
        offset = 0
        fds: dict[str, str] = {}
        stopped = False
        while True:
            hwm = vm_hwm_kb(proc.pid)
            if hwm is not None:
                peak = max(peak, hwm)
            pos = read_offset(proc.pid, path, fds)
            if pos is not None:
                offset = pos
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if budget and time.perf_counter() - t0 > budget and not stopped:
                stopped = True
                proc.send_signal(signal.SIGTERM)
            time.sleep(POLL)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    cpu = usage.ru_utime + usage.ru_stime
    # Stopped: the messages in the part of the file it had read, less half the 1 MiB
    # the reader reads ahead of what it has linted (so within +-0.5 MiB).
    done = max(0, offset - CHUNK // 2) / size
    messages = count * min(1.0, done) if stopped else float(count)
    return LintRun(proc.returncode, wall, cpu, peak, messages, stopped, stderr)


# -- 3./4. rule families in process ---------------------------------------------------


def load_prefix(path: Path, messages: int) -> tuple[list[Record], int]:
    """The header and every record up to the ``messages``-th message."""
    reader = CaptureReader(path)
    out: list[Record] = []
    n = 0
    for record in reader.stream():  # the header first
        out.append(record)
        if isinstance(record, Msg):
            n += 1
            if n >= messages:
                break
    return out, n


def families() -> dict[str, list[type[Rule]]]:
    by_family: dict[str, list[type[Rule]]] = defaultdict(list)
    for cls in rules.catalog().values():
        by_family[cls.__module__.rsplit(".", 1)[-1]].append(cls)
    return dict(sorted(by_family.items()))


def one_pass(
    records: list[Record], rule_set: Iterable[type[Rule]] | None, *, gate: bool = True
) -> tuple[float, int]:
    """CPU seconds to feed ``records`` through an Analyzer (with an engine running
    ``rule_set``, or none when it is None), and the number of violations."""
    found: list[Reported] = []
    listeners = (
        [] if rule_set is None else [RuleEngine(found.append, rules=list(rule_set), gate=gate)]
    )
    gc.collect()
    t0 = time.process_time()
    analyzer = Analyzer(listeners)
    feed = analyzer.feed
    for record in records:
        feed(record)
    analyzer.finish()
    return time.process_time() - t0, len(found)


@dataclass
class Cost:
    name: str
    rules: int
    seconds: float = float("inf")  # the best pass
    violations: int = 0


def measure_families(
    records: list[Record], repeats: int
) -> tuple[Cost, Cost, list[Cost], Cost, Cost]:
    by_family = families()
    alone = Cost("analyzer alone", 0)
    engine = Cost("engine, no rule", 0)
    family_costs = [Cost(name, len(classes)) for name, classes in by_family.items()]
    every = Cost("every rule", sum(len(c) for c in by_family.values()))
    ungated = Cost("every rule, no gate", every.rules)
    all_rules = [r for c in by_family.values() for r in c]
    plan: list[tuple[Cost, list[type[Rule]] | None, bool]] = [
        (alone, None, True),
        (engine, [], True),
    ]
    plan += [(cost, by_family[cost.name], True) for cost in family_costs]
    plan += [(every, all_rules, True), (ungated, all_rules, False)]
    for _ in range(repeats):  # interleaved, so a busy moment does not hit one row only
        for cost, rule_set, gate in plan:
            seconds, violations = one_pass(records, rule_set, gate=gate)
            cost.seconds = min(cost.seconds, seconds)
            cost.violations = violations
    return alone, engine, family_costs, every, ungated


def gate_share(records: list[Record]) -> float:
    """The share of messages the conformance gate accepted (one pass, every rule)."""
    engine = RuleEngine(lambda v: None)
    analyzer = Analyzer([engine])
    for record in records:
        analyzer.feed(record)
    analyzer.finish()
    messages = sum(isinstance(r, Msg) for r in records)
    return engine.gate_accepted / max(1, messages)


@dataclass
class RuleTime:
    rule: str
    family: str
    seconds: float = 0.0
    calls: int = 0


def timed_rules(records: list[Record]) -> tuple[list[RuleTime], float, float]:
    """One pass with every rule, each hook wrapped in a timer. Returns the rules' times,
    the pass's CPU seconds and the timer overhead per call (already taken off)."""
    found: list[Reported] = []
    engine = RuleEngine(found.append)
    clock = time.perf_counter_ns
    times: dict[str, RuleTime] = {}

    def wrap(hook: Callable[..., Any], slot: RuleTime) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            t0 = clock()
            try:
                out = hook(*args)
                if out is not None and not isinstance(out, list):
                    out = list(out)  # a generator's work happens when it is iterated
                return out
            finally:
                slot.seconds += (clock() - t0) / 1e9
                slot.calls += 1

        return timed

    for rule in engine.rules:
        slot = times[rule.id] = RuleTime(rule.id, type(rule).__module__.rsplit(".", 1)[-1])
        for hook in HOOKS:
            if getattr(type(rule), hook) is not getattr(Rule, hook):
                setattr(rule, hook, wrap(getattr(rule, hook), slot))
    # the timer's own cost, charged to every call: measure it on a no-op hook
    probe = RuleTime("probe", "")
    noop = wrap(lambda *a: None, probe)
    n = 200_000
    for _ in range(n):
        noop(None)
    inside = probe.seconds / n  # what the timer attributes to a no-op
    gc.collect()
    t0p = time.process_time()
    analyzer = Analyzer([engine])
    for record in records:
        analyzer.feed(record)
    analyzer.finish()
    total = time.process_time() - t0p
    for slot in times.values():
        slot.seconds = max(0.0, slot.seconds - slot.calls * inside)
    return sorted(times.values(), key=lambda t: -t.seconds), total, inside


def print_profile(records: list[Record], limit: int = 25) -> None:
    profiler = cProfile.Profile()
    analyzer = Analyzer([RuleEngine(lambda v: None)])
    profiler.enable()
    for record in records:
        analyzer.feed(record)
    analyzer.finish()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(limit)
    lines = out.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    for line in lines[start:]:
        if line.strip():
            say("    " + line.rstrip())


# -- main ----------------------------------------------------------------------------------


def describe_lint(lint: LintRun, count: int, base_rate: float) -> None:
    if lint.stopped:
        say(
            f"    stopped at the budget after {lint.wall:.1f} s, having read "
            f"~{lint.messages:,.0f} of {count:,} messages (rate from those)"
        )
    say(
        f"    lint:  {lint.rate:,.0f} msgs/s (cpu {lint.cpu:.2f} s, wall {lint.wall:.2f} s, "
        f"start-up included), {lint.rate / base_rate:.3f}x the baseline; peak RSS "
        f"{lint.peak_kb / 1024:.1f} MB; exit {lint.code}"
        + (" (1: errors found)" if lint.code == 1 else "")
    )
    if lint.stderr.strip() and not lint.stopped:
        say("    stderr: " + lint.stderr.strip()[-2000:])
    if lint.stopped:
        say(f"    (all {count:,} messages would take about {count / lint.rate:.0f} s of CPU)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100k messages")
    parser.add_argument(
        "--lint-budget",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds the lint run gets before its rate is taken from its progress "
        "(default 120; 0: no limit)",
    )
    parser.add_argument(
        "--family-messages",
        type=int,
        metavar="N",
        help="messages for the per-family figures (default 20000; 10000 with --quick)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="passes per family (best kept)")
    parser.add_argument(
        "--rounds",
        type=int,
        metavar="N",
        help="alternating rounds of lint and its floor; the median ratio is the figure "
        "(default 3; 1 with --quick)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile every rule in process")
    args = parser.parse_args()
    messages = 100_000 if args.quick else args.messages
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    prefix_n = args.family_messages or (10_000 if args.quick else 20_000)
    started = time.perf_counter()
    say(f"mcpeek lint benchmark{' (--quick)' if args.quick else ''}")
    say(
        f"python {sys.version.split()[0]} at {PYTHON}; {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory(prefix="mcpeek-bench-") as tmp:
        path = Path(tmp) / "bench.jsonl"
        t0 = time.perf_counter()
        count, raw_bytes = analyze.write_capture(path, messages)
        size_mb = path.stat().st_size / 1e6
        say(
            f"capture: {count:,} messages, {raw_bytes / 1e6:.1f} MB of raw JSON-RPC, "
            f"file {size_mb:.1f} MB (written in {time.perf_counter() - t0:.1f} s)"
        )

        say("\n[1] baseline: read + msgspec.json.decode of every message (fresh process)")
        base = analyze.run_child("baseline", path)
        base_rate = base["n"] / base["cpu"]
        say(
            f"  {base_rate:,.0f} msgs/s (cpu {base['cpu']:.2f} s, wall {base['wall']:.2f} s), "
            f"peak RSS {base['peak_kb'] / 1024:.1f} MB"
        )

        budget = f"; budget {args.lint_budget:.0f} s" if args.lint_budget else ""
        say(
            f"\n[2] python -m mcpeek lint --format json CAPTURE > /dev/null{budget}; then "
            "[2b] the same with every rule ignored: lint's floor (start-up, reading, "
            f"correlation, output); {args.rounds} round(s), alternating"
        )
        rounds: list[tuple[LintRun, LintRun]] = []  # (lint, its floor) of each round
        for round_no in range(1, args.rounds + 1):
            lint = run_lint(path, count, args.lint_budget)
            floor = run_lint(path, count, args.lint_budget, no_rules=True)
            rounds.append((lint, floor))
            say(f"  round {round_no}:")
            describe_lint(lint, count, base_rate)
            say(
                f"    floor: {floor.rate:,.0f} msgs/s (cpu {floor.cpu:.2f} s), "
                f"{floor.rate / base_rate:.3f}x the baseline; the rules cost "
                f"{1e6 / lint.rate - 1e6 / floor.rate:.1f} us/msg of lint's "
                f"{1e6 / lint.rate:.1f}; lint / floor {lint.rate / floor.rate:.3f}x"
            )
        rounds.sort(key=lambda pair: pair[0].rate / pair[1].rate)
        ratios = [lint.rate / floor.rate for lint, floor in rounds]
        ratio = statistics.median(ratios)
        # The round whose ratio is the median's (the lower middle one, for an even count)
        # stands for lint in the figures below.
        lint, floor = rounds[(len(rounds) - 1) // 2]
        lints = [pair[0] for pair in rounds]
        crashed = any(lt.code not in (0, 1) and not lt.stopped for lt in lints)
        if args.rounds > 1:
            say(
                f"  lint / floor by round: {', '.join(f'{r:.3f}x' for r in ratios)}; "
                f"median {ratio:.3f}x (the floor's CPU time alone swings by 20-30% from run "
                "to run here: one pair of runs is not a measurement)"
            )

        records, prefix_msgs = load_prefix(path, prefix_n)
    say(
        f"\n[3] rule families in process, over the first {prefix_msgs:,} messages "
        f"({len(records):,} records, in memory); best of {args.repeats} passes; "
        "us of CPU per message"
    )
    alone, engine, family_costs, every, ungated = measure_families(records, args.repeats)

    def us(seconds: float) -> float:
        return seconds / prefix_msgs * 1e6

    base_us = us(alone.seconds)
    say(
        f"  {'analyzer alone':<22}{base_us:>9.1f} us/msg  "
        f"({prefix_msgs / alone.seconds:,.0f} msgs/s)"
    )
    say(
        f"  {'engine with no rule':<22}{us(engine.seconds) - base_us:>+9.1f} us/msg  "
        "(the engine's own dispatch)"
    )
    family_costs.sort(key=lambda c: -c.seconds)
    say(f"  {'family':<16}{'rules':>6}{'us/msg':>10}{'share':>8}{'violations':>12}")
    added_all = us(every.seconds) - base_us
    for cost in family_costs:
        added = us(cost.seconds) - base_us
        say(
            f"  {cost.name:<16}{cost.rules:>6}{added:>10.1f}"
            f"{added / added_all * 100 if added_all > 0 else 0:>7.0f}%{cost.violations:>12,}"
        )
    sum_families = sum(us(c.seconds) - base_us for c in family_costs)
    say(
        f"  {'every rule':<16}{every.rules:>6}{added_all:>10.1f}{'':>8}{every.violations:>12,}"
        f"   ({prefix_msgs / every.seconds:,.0f} msgs/s in process)"
    )
    say(
        f"  sum of the families: {sum_families:.1f} us/msg (each family alone pays the shared "
        "lazy decodes and the engine's dispatch again)"
    )
    accepted = gate_share(records)
    say(
        f"  without the conformance gate: {us(ungated.seconds) - base_us:.1f} us/msg "
        f"({ungated.violations:,} violations); the gate accepted {accepted:.0%} of the messages"
    )

    say("\n[4] slowest rules (one pass with every rule, each rule's hooks timed in place)")
    slots, total, inside = timed_rules(records)
    in_rules = sum(s.seconds for s in slots)
    say(
        f"  pass: {us(total):.1f} us/msg; in the rules' hooks: {us(in_rules):.1f} us/msg "
        f"(timer overhead of {inside * 1e9:.0f} ns per call taken off)"
    )
    say(f"  {'rule':<44}{'family':<15}{'us/msg':>8}{'calls/msg':>11}{'us/call':>9}")
    for slot in slots[:15]:
        say(
            f"  {slot.rule:<44}{slot.family:<15}{us(slot.seconds):>8.2f}"
            f"{slot.calls / prefix_msgs:>11.2f}"
            f"{slot.seconds / slot.calls * 1e6 if slot.calls else 0:>9.2f}"
        )
    calls = sum(s.calls for s in slots)
    say(
        f"  {len(slots)} rules, {calls / prefix_msgs:.1f} hook calls per message; the rest of "
        f"the {len(slots) - 15} rules: {us(sum(s.seconds for s in slots[15:])):.2f} us/msg"
    )

    if args.profile:
        say(f"\n  cProfile of the Analyzer + every rule over {prefix_msgs:,} messages:")
        print_profile(records)

    ok = lint.rate >= TARGET_RATE
    slowest = family_costs[0]
    rows: list[tuple[str, str, str, bool | None]] = [
        (
            "lint msgs/s on one core" + (" (stopped at budget)" if lint.stopped else ""),
            f"{lint.rate:,.0f}",
            f">= {TARGET_RATE:,}",
            ok,
        ),
        (
            f"lint / its floor (median of {len(ratios)} round(s): "
            f"{ratios[0]:.3f}-{ratios[-1]:.3f}x)",
            f"{ratio:.3f}x",
            f">= {TARGET_FLOOR_RATIO}x",
            ratio >= TARGET_FLOOR_RATIO,
        ),
        ("lint / baseline (read + decode)", f"{lint.rate / base_rate:.3f}x", "(info)", None),
        ("lint, every rule ignored (its floor)", f"{floor.rate:,.0f}", "(info)", None),
        ("lint peak RSS", f"{max(lt.peak_kb for lt in lints) / 1024:.1f} MB", "(info)", None),
        ("lint exit code", str(lint.code), "0 or 1", None if lint.stopped else not crashed),
        ("analyzer alone, in process", f"{base_us:.1f} us/msg", "(info)", None),
        ("every rule, in process", f"{added_all:.1f} us/msg", "(info)", None),
        (
            "every rule, no gate, in process",
            f"{us(ungated.seconds) - base_us:.1f} us/msg",
            "(info)",
            None,
        ),
        (
            f"slowest family: {slowest.name}",
            f"{us(slowest.seconds) - base_us:.1f} us/msg",
            "(info)",
            None,
        ),
        (f"slowest rule: {slots[0].rule}", f"{us(slots[0].seconds):.1f} us/msg", "(info)", None),
    ]
    say("\nsummary")
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    say(f"  {'figure':<{w0}}  {'value':>{w1}}  {'target':<{w2}}  result")
    for name, value, target, verdict in rows:
        shown = "-" if verdict is None else ("PASS" if verdict else "MISS")
        say(f"  {name:<{w0}}  {value:>{w1}}  {target:<{w2}}  {shown}")
    say(
        f"  baseline {base_rate:,.0f} msgs/s; {count:,} messages; "
        f"load average now {os.getloadavg()[0]:.2f}"
    )
    say(f"  total time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
