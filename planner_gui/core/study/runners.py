"""Running a study's scenarios: in this process, on a local process pool, or on a Dask cluster.

The scenarios are independent tasks (a few scenarios per task, so that each task is worth sending); each
comes back as a row that the :class:`.store.ResultStore` keeps once. Every backend gives the same rows:
each scenario carries its own seed (:func:`.design.scenario_seed`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any
from urllib.parse import urlsplit

from ... import __version__
from ..analysis.sweep import run_cost
from ..files.scenario_io import ScenarioError, scenario_from_dict
from ..util.fmt import clean
from .design import design_size, scenario_doc, scenario_seed, values_of
from .spec import StudyError, StudySpec, missing_package
from .store import ResultStore, input_cell, output_cells
from .worker import ERROR_KEY, run_chunk, worker_version

__all__ = [
    "Backend",
    "check_done",
    "check_scheduler",
    "local_workers",
    "reach_scheduler",
    "run_study",
    "scenario_seconds",
]

#: Called as rows arrive: (scenarios done, scenarios in the study, done when this run started).
ProgressFn = Callable[[int, int, int], None]
#: A task runs scenarios for about this long at most (by the engine's cost model), at least one.
TASK_SECONDS = 1.0
#: ... and holds at most this many scenarios.
TASK_MAX_SCENARIOS = 64
#: Tasks in flight per Dask worker (enough to keep each busy while results travel).
IN_FLIGHT_PER_WORKER = 3
#: How long stopping the pool waits for a worker to end after SIGTERM before it kills it, in seconds.
STOP_GRACE_S = 1.0
#: How long to wait for a cluster's first worker.
WORKER_WAIT_S = 30.0


@dataclass(frozen=True)
class Backend:
    """Where a study runs: ``workers`` local processes (1: this process), or the Dask ``scheduler``."""

    workers: int = 0  # 0: one per core
    scheduler: str | None = None

    def describe(self) -> str:
        if self.scheduler is not None:
            return f"the Dask cluster at {clean(self.scheduler, 80)}"
        n = self.workers or local_workers()
        return "this process" if n == 1 else f"{n} local processes"


def local_workers() -> int:
    """Worker processes of the local pool: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def check_scheduler(address: str) -> str:
    """A scheduler address as ``tcp://HOST:PORT`` (or ``tls://``), else a one-line error."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or port is None or parts.path not in ("", "/"):
        raise StudyError(
            f"--scheduler: must be tcp://HOST:PORT, a Dask scheduler's address (got '{clean(address, 80)}')"
        )
    return address


def check_done(spec: StudySpec, store: ResultStore) -> None:
    """Rows already on disk must be this design's scenarios (the same inputs and seed at the same index); any
    other is set aside, to run again, and said once in ``store.notes``."""
    varied_seed = next((k for k, i in enumerate(spec.inputs) if i.path == ("seed",)), None)
    total = design_size(spec)
    bad: list[str] = []
    for index, row in list(store.done.items()):
        why = None
        if not 0 <= index < total:
            why = f"scenario {index:,} is outside this study's design"
        else:
            values = values_of(spec, index)
            for inp, v in zip(spec.inputs, values):
                cell = input_cell(inp, v)
                if row.get(inp.name) != cell:
                    why = f"scenario {index:,} has {inp.name} = {row.get(inp.name)!r}, this design {cell!r}"
                    break
            seed = values[varied_seed] if varied_seed is not None else scenario_seed(spec.seed, index)
            if why is None and row.get("seed") != seed:
                why = f"scenario {index:,} has seed {row.get('seed')!r}, this design {seed}"
        if why is not None:
            bad.append(why)
            del store.done[index]
    if bad:
        store.notes.append(
            f"{clean(store.path.name, 80)}: {len(bad):,} row{'s are' if len(bad) != 1 else ' is'} not this design's "
            f"scenario{'s' if len(bad) != 1 else ''} and run{'s' if len(bad) == 1 else ''} again ({clean(bad[0], 160)}"
            f"{'; ...' if len(bad) > 1 else ''})"
        )


#: What a scenario costs besides its simulation (seconds on the reference machine, one worker): building and
#: checking its scenario, its report, its row (2,000 scenarios of one trial over 2 days took 4.9 s).
SCENARIO_OVERHEAD_S = 2.5e-3


def scenario_seconds(spec: StudySpec, index: int) -> float:
    """The engine's cost model of scenario ``index``: the run (:func:`.sweep.run_cost`) and, with a training
    section, the time to train's interruptions (as ``planner-gui run`` counts them), with
    :data:`SCENARIO_OVERHEAD_S`; 0 when it cannot run."""
    try:
        sc = scenario_from_dict(scenario_doc(spec, index))
        seconds = run_cost(sc).seconds
        if sc.training is not None and not sc.uses_tiers and not sc.uses_spares:
            from ..analysis.training import SECONDS_PER_SPACING, training_events, work_hours
            from ..theory.params import resolve

            extra = training_events(resolve(sc)[0], work_hours(sc), sc.trials)
            seconds += extra * SECONDS_PER_SPACING if math.isfinite(extra) else 0.0
    except (ScenarioError, ValueError, ArithmeticError):
        return 0.0
    return float(seconds) + SCENARIO_OVERHEAD_S


def _chunk_size(spec: StudySpec, pending: list[int], workers: int) -> int:
    per_task = math.ceil(len(pending) / max(1, workers * 8))
    seconds = scenario_seconds(spec, pending[0])
    by_time = max(1, int(TASK_SECONDS / seconds)) if seconds > 0 else TASK_MAX_SCENARIOS
    return max(1, min(per_task, by_time, TASK_MAX_SCENARIOS))


def _tasks(spec: StudySpec, pending: list[int], size: int) -> Iterator[list[tuple[int, dict[str, Any]]]]:
    for start in range(0, len(pending), size):
        yield [(i, scenario_doc(spec, i)) for i in pending[start : start + size]]


def run_study(
    spec: StudySpec,
    store: ResultStore,
    backend: Backend,
    progress: ProgressFn | None = None,
    note: Callable[[str], None] | None = None,
) -> int:
    """Run every scenario of the study not yet in ``store``; returns how many ran now. A scenario that
    fails when it runs is recorded in ``store.failed`` (index: the one-line reason), not in the results.
    ``note`` is told, in one line, what the user should know while it runs (a cluster left without workers).

    KeyboardInterrupt stops the workers and propagates; rows received until then are in ``store``
    (close it to write them).
    """
    check_done(spec, store)
    total = design_size(spec)
    pending = [i for i in range(total) if i not in store.done]
    start = len(store.done)
    if not pending:
        return 0

    def receive(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            if ERROR_KEY in row:  # a scenario that could not run: nothing is recorded, the rest go on
                store.failed[int(row["index"])] = str(row[ERROR_KEY])
                continue
            values = values_of(spec, int(row["index"]))
            full = {"index": row["index"], "seed": row["seed"]}
            full |= {i.name: input_cell(i, v) for i, v in zip(spec.inputs, values)}
            full |= output_cells(spec, {k: v for k, v in row.items() if k not in ("index", "seed")})
            store.add(full)
        if progress is not None:
            progress(len(store.done), total, start)

    if progress is not None:
        progress(start, total, start)
    if backend.scheduler is not None:
        with _quiet_dask_logs():
            _run_dask(spec, pending, backend.scheduler, receive, note)
    else:
        n = backend.workers or local_workers()
        if n == 1 or len(pending) == 1:
            for task in _tasks(spec, pending, _chunk_size(spec, pending, 1)):
                receive(run_chunk(task))
        else:
            _run_pool(spec, pending, n, receive)
    return len(store.done) - start


# -- local process pool ------------------------------------------------------------------------------------
#
# A pool of its own, not concurrent.futures: each worker is a process with one pipe, given one task at a time,
# and the study waits on the pipes and the processes' sentinels together. Stopping it (Ctrl-C, SIGTERM, an
# error) is SIGTERM to every worker and a join with a deadline, then SIGKILL: there is no manager thread, queue
# feeder or shared lock left to wait for at exit (ProcessPoolExecutor's could hang the exit of an interrupted
# study for a minute on a loaded machine, and a second Ctrl-C then printed a traceback from inside it).


#: Linux's prctl option: a signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _quiet_worker(parent: int | None = None) -> None:
    """A pool worker leaves Ctrl-C to the study (which stops the pool) and prints no traceback for it, and
    on Linux dies with the study's process (SIGKILL of the study would otherwise leave it running)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


def _worker_main(conn: Connection, parent: int | None) -> None:
    """A worker: run each task it is sent and send back ("rows", rows) or ("error", one line), until the
    pipe closes or it is sent None."""
    _quiet_worker(parent)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            reply: tuple[str, Any] = ("rows", run_chunk(task))
        except Exception as exc:
            reply = ("error", str(_failure(exc)))
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


def _context() -> Any:
    """Fork where it is safe and cheap (Linux, no other threads yet); otherwise a fresh interpreter."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _failure(exc: BaseException) -> StudyError:
    if isinstance(exc, (ScenarioError, StudyError)):
        return StudyError(str(exc))
    return StudyError(f"a scenario failed in a worker ({clean(f'{type(exc).__name__}: {exc}', 200)})")


class _Deferred:
    """Ctrl-C and SIGTERM held back (in the main thread) while the block runs: a worker forked meanwhile does
    not take one as a KeyboardInterrupt before it ignores them, and stopping the pool is not cut short by a
    second one. With ``reraise``, the first that came is delivered when the block ends, to the handler that was
    in force (the study's: a KeyboardInterrupt, or the command line's Terminated for SIGTERM)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, reraise: bool) -> None:
        self.reraise = reraise
        self.came: int | None = None
        self.old: dict[int, Any] = {}

    def _hold(self, signum: int, frame: Any) -> None:
        if self.came is None:
            self.came = signum

    def __enter__(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.old = {sig: signal.signal(sig, self._hold) for sig in self.SIGNALS}

    def __exit__(self, kind: object, *exc: object) -> None:
        for sig, handler in self.old.items():
            signal.signal(sig, handler)
        if self.came is not None and self.reraise and kind is None:
            handler = self.old.get(self.came)
            if callable(handler):
                handler(self.came, None)  # raises (KeyboardInterrupt, Terminated)
            elif handler != signal.SIG_IGN:
                os.kill(os.getpid(), self.came)  # the default action, now that it is back


class _Pool:
    """``n`` worker processes, each with its pipe; see the note above."""

    def __init__(self, n: int) -> None:
        ctx = _context()
        parent = os.getpid() if ctx.get_start_method() == "fork" else None  # forkserver: the server is the parent
        self.procs: list[Any] = []
        self.conns: list[Connection] = []
        try:
            with _Deferred(reraise=True):
                for _ in range(n):
                    mine, theirs = ctx.Pipe(duplex=True)
                    proc = ctx.Process(target=_worker_main, args=(theirs, parent), daemon=True)
                    proc.start()
                    theirs.close()  # the worker's end lives in the worker only: its death closes the pipe
                    self.procs.append(proc)
                    self.conns.append(mine)
        except BaseException:
            self.stop()
            raise

    def stop(self, grace: float = STOP_GRACE_S) -> None:
        """End every worker now (running tasks are abandoned) and wait for them, a bounded time."""
        with _Deferred(reraise=False):
            for proc in self.procs:
                if proc.is_alive():
                    try:
                        proc.terminate()
                    except (OSError, AttributeError):
                        pass
            _join_all(self.procs, grace)
            for proc in self.procs:
                if proc.is_alive():
                    proc.kill()
            _join_all(self.procs, 5.0)
            for conn in self.conns:
                conn.close()
            self.procs, self.conns = [], []

    def close(self) -> None:
        """End idle workers as asked (None on their pipe), then as :meth:`stop` does any that linger."""
        for conn in self.conns:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        _join_all(self.procs, 5.0)
        self.stop()


def _join_all(procs: list[Any], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for proc in procs:
        try:
            proc.join(max(0.0, deadline - time.monotonic()))
        except (OSError, AssertionError):
            pass


_DIED = "a worker process died (out of memory?); the results so far are kept: run the same command to go on"


def _run_pool(spec: StudySpec, pending: list[int], n: int, receive: Callable[[list[dict[str, Any]]], None]) -> None:
    tasks = _tasks(spec, pending, _chunk_size(spec, pending, n))
    pool = _Pool(n)
    try:
        busy: dict[Connection, Any] = {}  # a worker's pipe -> its process, while it runs a task
        for conn, proc in zip(pool.conns, pool.procs):
            task = next(tasks, [])
            if not task:
                break
            conn.send(task)
            busy[conn] = proc
        while busy:
            owner: dict[Any, Connection] = {c: c for c in busy} | {p.sentinel: c for c, p in busy.items()}
            for item in wait(list(owner), timeout=0.5):  # a result, or a worker that ended
                conn = owner[item]
                if conn not in busy:
                    continue
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    raise StudyError(_DIED) from None
                if kind == "error":
                    raise StudyError(str(payload))
                receive(payload)
                task = next(tasks, [])
                if task:
                    conn.send(task)
                else:
                    del busy[conn]
    except BaseException:
        pool.stop()
        raise
    pool.close()


# -- Dask ----------------------------------------------------------------------------------------------


#: How long connecting to a scheduler may take.
CONNECT_TIMEOUT_S = 10.0
#: The most a Dask scheduler's first message (its handshake) may hold, in bytes.
_HANDSHAKE_MAX_BYTES = 1 << 20


def reach_scheduler(address: str) -> None:
    """Check that a study can run on the Dask scheduler at ``address``: the address, the packages, and that a
    Dask scheduler answers there (one line if not, before anything is said of the study)."""
    check_scheduler(address)
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise StudyError(f"--scheduler: needs {missing_package(exc)}") from None
    _probe_scheduler(address)


def _probe_scheduler(address: str) -> None:
    """Refuse, in one line, an address where no Dask scheduler answers: a Dask scheduler speaks first (its
    handshake: an 8-byte length, then frames that hold a small message of its compression, Python and pickle
    protocol), so a server that sends nothing (a web server) or something else is found without handing it
    to dask.distributed, which can wait on it forever. A ``tls://`` scheduler speaks only after the TLS
    handshake: it is only checked to be listening, and the TLS settings to be there."""
    import socket
    import struct

    parts = urlsplit(address)
    host, port = parts.hostname or "", parts.port or 0
    shown = clean(address, 80)
    tls = parts.scheme == "tls"
    if tls:
        _check_tls_settings()
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
    except TimeoutError:
        raise StudyError(f"--scheduler: cannot reach {shown} (no answer in {CONNECT_TIMEOUT_S:.0f} s)") from None
    except OSError as exc:
        raise StudyError(f"--scheduler: cannot reach {shown} ({clean(exc.strerror or str(exc), 120)})") from None
    try:
        with sock:
            if tls:
                return
            sock.settimeout(CONNECT_TIMEOUT_S)
            head = _recv(sock, 8)
            if len(head) < 8:
                raise StudyError(f"--scheduler: {shown} is not a Dask scheduler (it closed the connection)")
            (length,) = struct.unpack("<Q", head)
            if not 0 < length <= _HANDSHAKE_MAX_BYTES:
                raise StudyError(f"--scheduler: {shown} is not a Dask scheduler (it answered something else)")
            body = _recv(sock, length)
    except TimeoutError:
        raise StudyError(
            f"--scheduler: {shown} is not a Dask scheduler (it sent nothing in {CONNECT_TIMEOUT_S:.0f} s)"
        ) from None
    except OSError as exc:
        raise StudyError(f"--scheduler: cannot reach {shown} ({clean(exc.strerror or str(exc), 120)})") from None
    if not _is_handshake(body):
        raise StudyError(f"--scheduler: {shown} is not a Dask scheduler (it answered something else)")


def _recv(sock: Any, n: int) -> bytes:
    data = b""
    while len(data) < n:
        more = sock.recv(min(n - len(data), 65536))
        if not more:
            break
        data += more
    return data


def _is_handshake(body: bytes) -> bool:
    """Whether ``body`` is a Dask comm's handshake: a frame count, the frames' lengths, the frames, and in
    them a message with the peer's Python version."""
    import struct

    try:
        (count,) = struct.unpack_from("<Q", body)
        if not 1 <= count <= 16 or len(body) < 8 + 8 * count:
            return False
        lengths = struct.unpack_from(f"<{count}Q", body, 8)
        pos = 8 + 8 * count
        if pos + sum(lengths) != len(body):
            return False
        frames = []
        for n in lengths:
            frames.append(body[pos : pos + n])
            pos += n
        from distributed.protocol import loads

        msg = loads(frames, deserialize=False)
    except Exception:  # whatever the bytes make the decoder raise: not a handshake
        return False
    return isinstance(msg, dict) and "python" in msg


def _check_tls_settings() -> None:
    """A ``tls://`` scheduler needs dask.distributed's TLS settings (its CA file, and the client's certificate
    and key): without them the client cannot even start the handshake."""
    import dask

    ca, cert = (dask.config.get(f"distributed.comm.tls.{k}", default=None) for k in ("ca-file", "client.cert"))
    if not ca or not cert:
        raise StudyError(
            "--scheduler: a tls:// scheduler needs dask.distributed's TLS settings (distributed.comm.tls.ca-file "
            "and distributed.comm.tls.client.cert, .key in the Dask config or DASK_DISTRIBUTED__COMM__TLS__... "
            "variables)"
        )


def _connect(client_class: Any, address: str) -> Any:
    """A Client of the scheduler at ``address``, made on a thread of its own with a deadline (so nothing
    here waits forever), every failure one line. A client that failed half-way is let go on that thread
    (its clean-up can wait on the scheduler; this one does not)."""
    box: dict[str, Any] = {}
    ready = threading.Event()

    def connect() -> None:
        try:
            box["client"] = client_class(address, timeout=f"{CONNECT_TIMEOUT_S:.0f}s", set_as_default=False)
        except BaseException as exc:
            box["error"] = f"{type(exc).__name__}: {exc}"  # (the text, not the exception: it holds the client)
            del exc
        finally:
            ready.set()

    threading.Thread(target=connect, daemon=True, name="study-connect").start()
    shown = clean(address, 80)
    if not ready.wait(CONNECT_TIMEOUT_S * 3):
        raise StudyError(f"--scheduler: no Dask scheduler answered at {shown} within {CONNECT_TIMEOUT_S * 3:.0f} s")
    if "error" in box:
        raise StudyError(
            f"--scheduler: cannot connect to a Dask scheduler at {shown} ({clean(box['error'], 160)})"
        ) from None
    return box["client"]


#: Seconds without a result after which a study on a Dask cluster looks at its workers (and says when it has none).
WORKER_NOTE_S = 15.0
#: How often the study looks for results that came back from the cluster (seconds).
_POLL_S = 0.05


class _WorkerWatch:
    """Says, through ``note``, when the cluster has no workers left (the study waits for one) and when
    workers are back; silent while the count of workers only changes among non-zero values."""

    def __init__(self, client: Any, address: str, note: Callable[[str], None] | None) -> None:
        self.client, self.address, self.note = client, clean(address, 80), note
        self.had = self._count()
        self.waiting = False

    def _count(self) -> int:
        try:
            return len(self.client.nthreads())
        except Exception:  # the scheduler is unreachable for a moment: as if unknown
            return -1

    def check(self) -> None:
        n = self._count()
        if n == 0 and not self.waiting:
            self.waiting = True
            self._say(
                f"the study waits for workers: the cluster at {self.address} has none now (it had "
                f"{self.had:,}); it goes on when one joins (Ctrl-C stops it; the results so far are kept)"
            )
        elif n > 0 and self.waiting:
            self.waiting = False
            self._say(f"{n:,} worker{'s' if n != 1 else ''} joined the cluster again; the study goes on")
        if n > 0:
            self.had = n

    def _say(self, text: str) -> None:
        if self.note is not None:
            self.note(text)


def _connection_lost(exc: BaseException | None, client: Any) -> bool:
    """Whether a task's failure is the client's lost connection (its futures cancelled), not the scenario's."""
    text = f"{type(exc).__name__}: {exc}"
    return "scheduler-connection-lost" in text or ("Cancelled" in type(exc).__name__ and client.status != "running")


@contextlib.contextmanager
def _quiet_dask_logs() -> Iterator[None]:
    """The client's own log lines (`distributed.client - ERROR - Failed to reconnect ...`) are not the study's
    to print: what they mean is said in one line."""
    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client", "distributed.core")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _run_dask(
    spec: StudySpec,
    pending: list[int],
    address: str,
    receive: Callable[[list[dict[str, Any]]], None],
    note: Callable[[str], None] | None = None,
) -> None:
    reach_scheduler(address)
    from distributed import Client, as_completed

    client = _connect(Client, address)
    futures: list[Any] = []
    try:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except (TimeoutError, OSError):
            raise StudyError(
                f"--scheduler: no workers joined {clean(address, 80)} within {WORKER_WAIT_S:.0f} s"
            ) from None
        try:
            theirs = client.submit(worker_version, pure=False).result(timeout=120)
        except Exception as exc:
            raise StudyError(
                f"--scheduler: the workers cannot run planner-gui; install planner-gui {__version__} on every worker "
                f"({clean(f'{type(exc).__name__}: {exc}', 160)})"
            ) from None
        if theirs != __version__:
            raise StudyError(
                f"--scheduler: the workers run planner-gui {theirs}, this is {__version__}; use the same version"
            )
        workers = max(1, sum(client.nthreads().values()))
        size = _chunk_size(spec, pending, workers)
        tasks = _tasks(spec, pending, size)
        from .store import fingerprint

        tag = fingerprint(spec)[:12]

        def submit(task: list[tuple[int, dict[str, Any]]]) -> Any:
            key = f"planner-gui-study-{tag}-{task[0][0]}-{len(task)}"
            fut = client.submit(run_chunk, task, key=key, retries=2)
            futures.append(fut)
            return fut

        first = []
        for task in tasks:
            first.append(submit(task))
            if len(first) >= workers * IN_FLIGHT_PER_WORKER:
                break
        # with_results: a task's rows are fetched as it completes, so that no wait here is on a result that a
        # worker took with it when it left (the scheduler runs that task again; the watch says what it waits for)
        ac = as_completed(first, loop=client.loop, with_results=True, raise_errors=False)
        watch = _WorkerWatch(client, address, note)
        quiet_since = time.monotonic()
        while not ac.is_empty():
            done = ac.next_batch(block=False)
            if not done:  # nothing came back yet: after a while, see whether the cluster has workers left
                if time.monotonic() - quiet_since >= WORKER_NOTE_S:
                    watch.check()
                    quiet_since = time.monotonic()
                time.sleep(_POLL_S)
                continue
            if watch.waiting:
                watch.check()
            quiet_since = time.monotonic()
            for fut, rows in done:
                if fut.status == "error" or isinstance(rows, BaseException):
                    error = rows if isinstance(rows, BaseException) else fut.exception()
                    if _connection_lost(error, client):
                        raise StudyError(
                            f"--scheduler: the connection to the Dask scheduler at {clean(address, 80)} was lost; "
                            "the results received are kept: run the same command to go on"
                        ) from None
                    raise _failure(error) from None
                futures.remove(fut)
                fut.release()
                receive(rows)
                task = next(tasks, [])
                if task:
                    ac.add(submit(task))
    finally:
        try:
            if futures:
                client.cancel(futures)
            client.close(timeout=10)
        except Exception:
            pass
