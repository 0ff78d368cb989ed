"""Starts, watches and stops the Procfile's components.

    python -m infra.supervisor up [--detach] [--timeout S] [--install-only]
    python -m infra.supervisor down
    python -m infra.supervisor status

`up` (foreground) runs `honcho start` for the components this checkout has, and creates the
topics once Kafka answers. `up --detach` starts each component itself in its own session
(pid in var/run/<name>.pid, output in var/run/<name>.log) and returns once all are healthy.
`down` stops only what the pid files name.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from infra import kafka_node, minio_node
from infra.health import probe
from infra.layout import PROCFILE, REPO_ROOT, Layout
from infra.procfile import Component, read_procfile
from infra.toolchain import StrataError, check_component_ports, ensure_chromium, find_tool
from schemas.config import Settings, settings

INFRA_COMPONENTS = ("kafka", "minio")  # started first; the rest need Kafka (and topics)
STOP_GRACE_S = 15.0
DEFAULT_TIMEOUT_S = 120.0
LOG_TAIL_LINES = 25

console = Console(stderr=False, highlight=False)


# ---------------------------------------------------------------- pid files


def _boot_time() -> float:
    with open("/proc/stat") as fh:
        for line in fh:
            if line.startswith("btime "):
                return float(line.split()[1])
    return 0.0


def _proc_stat(pid: int) -> tuple[str, float] | None:
    """(state letter, start time as epoch seconds) of a live pid, else None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    state, start_ticks = fields[0], int(fields[19])
    return state, _boot_time() + start_ticks / os.sysconf("SC_CLK_TCK")


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def running_pid(pid_file: Path) -> int | None:
    """The pid in `pid_file` when that process is alive and is the one we started.

    A zombie counts as dead; so does a process that started after the pid file was written
    (the pid was reused by something else).
    """
    pid = read_pid(pid_file)
    if pid is None:
        return None
    st = _proc_stat(pid)
    if st is None or st[0] in ("Z", "X"):
        return None
    try:
        written = pid_file.stat().st_mtime
    except OSError:
        return None
    return pid if st[1] <= written + 2.0 else None


def _write_pid(pid_file: Path, pid: int) -> None:
    tmp = pid_file.with_suffix(".pid.tmp")
    tmp.write_text(f"{pid}\n")
    os.replace(tmp, pid_file)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            data = fh.read().decode(errors="replace")
    except OSError:
        return f"(no log at {path})"
    mark = data.rfind("=== strata: starting ")
    if mark >= 0:  # only this start's output, not earlier runs'
        data = data[mark:]
    return "\n".join(data.splitlines()[-lines:])


# ---------------------------------------------------------------- components


def available_components(announce: bool = True, only: Iterable[str] | None = None
                         ) -> tuple[list[Component], list[tuple[Component, str]]]:
    """The Procfile's components that can run here (and those skipped, with why)."""
    wanted = set(only) if only else None
    procfile = read_procfile(PROCFILE)
    if wanted is not None:
        unknown = wanted - {c.name for c in procfile}
        if unknown:
            raise StrataError(f"--only: no such component {', '.join(sorted(unknown))} in {PROCFILE.name}")
    comps, skipped = [], []
    for comp in procfile:
        reason = "not in --only" if wanted is not None and comp.name not in wanted else comp.missing_reason()
        if reason:
            skipped.append((comp, reason))
        else:
            comps.append(comp)
    if announce:
        for comp, reason in skipped:
            console.print(f"[dim]- {comp.name}: skipped ({reason})[/dim]")
    return comps, skipped


def install_all(s: Settings, lay: Layout) -> dict[str, float]:
    """Installs Kafka jars and MinIO when missing and prepares Kafka storage. Returns timings."""
    timings: dict[str, float] = {}
    t = time.monotonic()
    if kafka_node.install(lay):
        timings["kafka_install_s"] = round(time.monotonic() - t, 2)
        console.print(f"  kafka {s.kafka_version} jars installed in {timings['kafka_install_s']} s")
    t = time.monotonic()
    if minio_node.install(lay):
        timings["minio_install_s"] = round(time.monotonic() - t, 2)
        console.print(f"  minio {s.minio_version} built in {timings['minio_install_s']} s")
    t = time.monotonic()
    had_chromium = shutil.which("chromium") is not None
    problem = ensure_chromium()  # the console's end-to-end test drives headless Chromium
    if problem:
        console.print(f"[yellow]  {problem} (only tests/query/test_console.py needs it)[/yellow]")
    elif not had_chromium:
        timings["chromium_install_s"] = round(time.monotonic() - t, 2)
        console.print(f"  chromium installed in {timings['chromium_install_s']} s")
    for d in (lay.run_dir, s.state_dir, s.ssd_dir, s.hdd_dir):  # the stack's standard directories
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StrataError(f"cannot create {d}: {exc.strerror}") from None
    t = time.monotonic()
    kafka_node.prepare(s, lay, quiet=False)
    timings["kafka_prepare_s"] = round(time.monotonic() - t, 2)
    return timings


@dataclass
class Waiter:
    """Watches one component until healthy, dead or out of time."""

    name: str
    lay: Layout
    s: Settings
    started_at: float
    detached: bool = True
    healthy_after: float | None = None
    last_reason: str | None = "not checked yet"
    died: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def run(self, deadline: float, stop: threading.Event) -> None:
        pid_file = self.lay.pid_file(self.name)
        while not stop.is_set():
            self.last_reason = probe(self.name, self.s)
            if self.last_reason is None:
                self.healthy_after = time.monotonic() - self.started_at
                break
            if self.detached and running_pid(pid_file) is None:
                self.died = True
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        self.done.set()


def wait_healthy(names: Iterable[str], s: Settings, lay: Layout, started_at: float, deadline: float,
                 detached: bool = True) -> dict[str, float]:
    """Blocks until every component is healthy; raises StrataError naming the first that is not."""
    waiters = [Waiter(n, lay, s, started_at, detached) for n in names]
    if not waiters:
        return {}
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=len(waiters)) as pool:
        for w in waiters:
            pool.submit(w.run, deadline, stop)
        pending = list(waiters)
        with console.status("") as status:
            while pending:
                status.update("waiting for " + ", ".join(w.name for w in pending)
                              + f" ({time.monotonic() - started_at:.0f} s)")
                for w in list(pending):
                    if not w.done.is_set():
                        continue
                    pending.remove(w)
                    if w.healthy_after is not None:
                        console.print(f"  [green]✓[/green] {w.name} healthy "
                                      f"({w.healthy_after:.1f} s)")
                        continue
                    stop.set()
                    what = "exited" if w.died else f"not healthy after {deadline - started_at:g} s"
                    raise StrataError(_failure(w, what))
                time.sleep(0.1)
    return {w.name: round(w.healthy_after or 0.0, 2) for w in waiters}


def _failure(w: Waiter, what: str) -> str:
    log = w.lay.log_file(w.name)
    extra = f"\n  (full broker log: {w.lay.kafka_logs / 'server.log'})" if w.name == "kafka" else ""
    return (f"strata: {w.name} {what} — last check: {w.last_reason}\n"
            f"--- tail of {log} ---\n{log_tail(log)}\n---{extra}")


# ---------------------------------------------------------------- up --detach


def _spawn(comp: Component, lay: Layout) -> int:
    lay.run_dir.mkdir(parents=True, exist_ok=True)
    log_path = lay.log_file(comp.name)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(log_path, "ab") as log:
        log.write(f"\n=== strata: starting {comp.name} at {time.strftime('%F %T')}: {comp.command}\n"
                  .encode())
        log.flush()
        proc = subprocess.Popen(
            ["bash", "-c", f"exec {comp.command}"], cwd=REPO_ROOT, env=env,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    _write_pid(lay.pid_file(comp.name), proc.pid)
    proc.returncode = 0  # detached on purpose: silence Popen's "still running" warning
    return proc.pid


def _ensure_topics(s: Settings) -> None:
    from confluent_kafka import KafkaException

    from infra.kafka_acl import secure
    from infra.topics import ensure_and_check

    try:
        # The broker's credential and ACLs first: Strata's topics are never there without them.
        for a in secure(s):
            console.print(f"  kafka: {a}")
        actions, problems = ensure_and_check(s)
    except KafkaException as exc:
        raise StrataError(f"topics: Kafka admin request failed: {exc}") from None
    for a in actions:
        console.print(f"  topics: {a}")
    if problems:
        raise StrataError("topics are not as specified: " + "; ".join(problems))
    console.print("  [green]✓[/green] topics ok")


def _lock(lay: Layout) -> int:
    """An exclusive lock on run/up.lock, so two `up --detach` never start the same component twice."""
    import fcntl

    lay.run_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lay.run_dir / "up.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        console.print("  another infra/up is running for this home — waiting for it")
        fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def up_detach(s: Settings, lay: Layout, timeout: float, only: list[str] | None = None) -> int:
    lock = _lock(lay)  # held until this process exits
    comps, skipped = available_components(only=only)
    kafka_pid = running_pid(lay.pid_file("kafka"))
    if kafka_pid is not None and s.local_kafka_password() is None:
        # Its clients would now log in on a listener that broker does not have, or not with SCRAM.
        raise StrataError(f"kafka (pid {kafka_pid}) was started before it had a Strata listener (no "
                          f"{s.kafka_password_file}): run infra/down, then infra/up")
    t_install = install_all(s, lay)
    started_at = time.monotonic()
    deadline = started_at + timeout

    running = {c.name: running_pid(lay.pid_file(c.name)) for c in comps}
    to_start = [c for c in comps if running[c.name] is None]
    for c in comps:
        pid = running[c.name]
        if pid is not None:
            console.print(f"  {c.name}: already running (pid {pid})")
        else:
            lay.pid_file(c.name).unlink(missing_ok=True)
    check_component_ports(s, [c.name for c in to_start])  # all of them before starting any

    healthy: dict[str, float] = {}
    waves = ([c for c in comps if c.name in INFRA_COMPONENTS],
             [c for c in comps if c.name not in INFRA_COMPONENTS])
    for i, wave in enumerate(waves):
        for c in wave:
            if c in to_start:
                pid = _spawn(c, lay)
                console.print(f"  {c.name}: started (pid {pid}, log {lay.log_file(c.name)})")
        healthy.update(wait_healthy([c.name for c in wave], s, lay, started_at, deadline))
        if i == 0 and any(c.name == "kafka" for c in comps):
            _ensure_topics(s)

    total = round(time.monotonic() - started_at, 2)
    report = {
        "seconds": total,
        "components": healthy,
        "started": [c.name for c in to_start],
        "already_running": [c.name for c in comps if c not in to_start],
        "skipped": {c.name: why for c, why in skipped},
        **t_install,
    }
    lay.up_report.write_text(json.dumps(report, indent=2) + "\n")
    os.close(lock)
    console.print(f"[bold green]strata: up[/bold green] — {', '.join(healthy)} healthy in {total} s "
                  f"(home {s.home})")
    return 0


# ---------------------------------------------------------------- up (foreground)


def up_foreground(s: Settings, lay: Layout, timeout: float, only: list[str] | None = None) -> int:
    comps, _ = available_components(only=only)
    install_all(s, lay)
    alive = [c.name for c in comps if running_pid(lay.pid_file(c.name)) is not None]
    if alive:
        raise StrataError(f"a detached stack is running ({', '.join(alive)}) — run infra/down first")
    check_component_ports(s, [c.name for c in comps])
    honcho = str(Path(sys.executable).with_name("honcho"))
    if not os.access(honcho, os.X_OK):
        honcho = find_tool("honcho")
    cmd = [honcho, "-f", str(PROCFILE), "-d", str(REPO_ROOT), "start", *[c.name for c in comps]]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT)

    # Ctrl-C reaches honcho too (same process group); it stops the children, we wait for it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())

    def after_kafka() -> None:
        start = time.monotonic()
        try:
            wait_healthy(["kafka"], s, lay, start, start + timeout, detached=False)
            _ensure_topics(s)
        except StrataError as exc:
            console.print(f"[red]{exc}[/red]")

    if any(c.name == "kafka" for c in comps):
        threading.Thread(target=after_kafka, daemon=True).start()
    return proc.wait()


# ---------------------------------------------------------------- down / status


def _signal(pid: int, sig: int) -> None:
    try:
        if os.getpgid(pid) == pid:  # started with setsid: stop its whole group
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _stop_names(lay: Layout) -> list[list[str]]:
    """Pid-file names in stop order: apps first, then Kafka/MinIO."""
    if not lay.run_dir.is_dir():
        return []
    names = sorted(p.stem for p in lay.run_dir.glob("*.pid"))
    apps = [n for n in names if n not in INFRA_COMPONENTS]
    return [w for w in (apps, [n for n in names if n in INFRA_COMPONENTS]) if w]


def down(s: Settings, lay: Layout) -> int:
    stopped_any = False
    for wave in _stop_names(lay):
        pids: dict[str, int] = {}
        for name in wave:
            pid = running_pid(lay.pid_file(name))
            if pid is None:
                lay.pid_file(name).unlink(missing_ok=True)
                console.print(f"  {name}: not running (removed stale pid file)")
                continue
            _signal(pid, signal.SIGTERM)
            pids[name] = pid
        deadline = time.monotonic() + STOP_GRACE_S
        while pids and time.monotonic() < deadline:
            for name, pid in list(pids.items()):
                if running_pid(lay.pid_file(name)) is None:
                    console.print(f"  {name}: stopped (pid {pid})")
                    lay.pid_file(name).unlink(missing_ok=True)
                    del pids[name]
                    stopped_any = True
            time.sleep(0.1)
        for name, pid in pids.items():
            console.print(f"  [yellow]{name}: still running after {STOP_GRACE_S:.0f} s — SIGKILL[/yellow]")
            _signal(pid, signal.SIGKILL)
            for _ in range(50):
                if running_pid(lay.pid_file(name)) is None:
                    break
                time.sleep(0.1)
            lay.pid_file(name).unlink(missing_ok=True)
            stopped_any = True
    console.print("strata: down" + ("" if stopped_any else " (nothing was running)") + f" (home {s.home})")
    return 0


def status(s: Settings, lay: Layout) -> int:
    comps, _ = available_components()
    bad = 0
    for c in comps:
        pid = running_pid(lay.pid_file(c.name))
        reason = probe(c.name, s)
        state = "healthy" if reason is None else f"unhealthy: {reason}"
        console.print(f"  {c.name}: {'pid ' + str(pid) if pid else 'no pid file'}, {state}")
        bad += reason is not None
    return 1 if bad else 0


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    from infra.cli_util import guarded

    ap = argparse.ArgumentParser(prog="strata-infra")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--detach", "-d", action="store_true")
    up.add_argument("--install-only", action="store_true")
    up.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    up.add_argument("--only", type=lambda v: [n for n in v.split(",") if n],
                    help="comma-separated Procfile names to start (default: every one present)")
    sub.add_parser("down")
    sub.add_parser("status")
    sub.add_parser("check-config")
    args = ap.parse_args(argv)

    def go() -> int:
        s = settings()
        lay = Layout(s)
        if args.cmd == "up":
            if args.install_only:
                install_all(s, lay)
                return 0
            if args.detach:
                return up_detach(s, lay, args.timeout, args.only)
            return up_foreground(s, lay, args.timeout, args.only)
        if args.cmd == "down":
            return down(s, lay)
        if args.cmd == "status":
            return status(s, lay)
        console.print_json(data=s.redacted())
        return 0

    return guarded(go)


if __name__ == "__main__":
    sys.exit(main())
