"""``loop.presses.Deliveries``: `leap run` counts a second Ctrl-C or SIGTERM as the kernel
delivered it, not by its Python handler running: a handler can be preempted before its
first line by the next signal's, and never run (CI: the second of two signals sent at once
went uncounted, and the run waited for its jurors). Real signals, in a child process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PREEMPTED = """\
import os, signal, sys
from leapgit.loop.presses import Deliveries

deliveries, ran, sent = Deliveries(), [], []
done = deliveries.open()


def handler(signum, frame):  # as `leap run`'s first press: it raises
    ran.append(signal.Signals(signum).name)
    raise KeyboardInterrupt


def tracer(frame, event, arg):  # SIGTERM lands as SIGINT's handler starts
    if event == "call" and frame.f_code is handler.__code__ and not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
    return None


for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, handler)
sys.settrace(tracer)
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    pass
sys.settrace(None)
print("handlers that ran:", ran, "delivered:", deliveries.count())
done()
print("after close:", deliveries.count(), signal.set_wakeup_fd(-1))
"""


def test_a_handler_preempted_before_its_first_line_is_still_counted() -> None:
    proc = subprocess.run([sys.executable, "-c", PREEMPTED], capture_output=True, text=True,
                          timeout=30, cwd=ROOT)
    lines = proc.stdout.splitlines()
    # SIGINT's handler never ran: SIGTERM's, run at its start, raised first
    assert lines[0] == "handlers that ran: ['SIGTERM'] delivered: 2", (proc.stdout, proc.stderr)
    assert lines[1] == "after close: 2 -1", lines  # the wakeup fd as it was: none


def test_counting_only_in_the_main_thread_only_sigint_and_sigterm_and_put_back_after(
        ) -> None:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os, signal, threading
        from leapgit.loop.presses import Deliveries
        d = Deliveries()
        out = []
        t = threading.Thread(target=lambda: out.append(d.open()))
        t.start(); t.join()
        out[0]()  # another thread cannot count: nothing to end
        mine = os.pipe()
        os.set_blocking(mine[1], False)
        signal.set_wakeup_fd(mine[1])  # a wakeup fd of someone else's, before the count
        fds = len(os.listdir("/proc/self/fd"))
        done = d.open()
        signal.signal(signal.SIGUSR1, lambda s, f: None)
        signal.signal(signal.SIGINT, lambda s, f: None)
        os.kill(os.getpid(), signal.SIGUSR1)
        os.kill(os.getpid(), signal.SIGINT)
        print(d.count())
        done()
        print(signal.set_wakeup_fd(-1) == mine[1], len(os.listdir("/proc/self/fd")) == fds)
    """)], capture_output=True, text=True, timeout=30, cwd=ROOT)
    # one counted; the fd before it back in place, and none of the count's own left open
    assert proc.stdout.split() == ["1", "True", "True"], (proc.stdout, proc.stderr)


RUN = """\
import os, signal, sys
from leapgit.loop.drive import SliceRun
from leapgit.worktrees.builder import Stop

run = SliceRun.__new__(SliceRun)  # the parts of a run its signal handling reads
run.stop, run.presses, run.driving = Stop(), 0, True
from leapgit.loop.presses import Deliveries
run.deliveries = Deliveries()
restore = run._count_interrupts()
handler = signal.getsignal(signal.SIGINT)
sent = []


def tracer(frame, event, arg):  # SIGTERM lands as SIGINT's handler starts
    if event == "call" and frame.f_code is handler.__code__ and not sent:
        sent.append(1)
        os.kill(os.getpid(), signal.SIGTERM)
    return None


sys.settrace(tracer)
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    print("interrupted")
sys.settrace(None)
print("presses", run.presses, "twice", run._twice())
restore()
print("restored", signal.getsignal(signal.SIGINT) is signal.default_int_handler)

run.presses, run.deliveries = 0, Deliveries()  # one Ctrl-C alone: once, never twice
restore = run._count_interrupts()
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    print("interrupted")
print("presses", run.presses, "twice", run._twice())
restore()
"""


def test_leap_run_counts_two_signals_at_once_as_two_though_one_handler_never_ran() -> None:
    """`leap run`'s own handler, its second signal landing as the first's handler starts:
    one handler ran (one press counted, one KeyboardInterrupt), and the run still sees two
    (``_twice``: `_drain` ends the run at once instead of waiting for its jurors)."""
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                          timeout=30, cwd=ROOT)
    assert proc.stdout.splitlines() == ["interrupted", "presses 1 twice True",
                                        "restored True", "interrupted",
                                        "presses 1 twice False"], (proc.stdout, proc.stderr)


def test_no_fd_left_counts_by_the_handler_alone() -> None:
    """Out of file descriptors, `leap run` still starts: the pipe is not made, nothing is
    counted from it, and ending the count does nothing (a boundary review: it raised)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os, resource, signal
        from leapgit.loop.presses import Deliveries
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        held = []
        try:
            while True:
                held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        d = Deliveries()
        done = d.open()
        print(d.count(), signal.set_wakeup_fd(-1))
        done()
    """)], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert proc.stdout.split() == ["0", "-1"], (proc.stdout, proc.stderr)


def test_the_run_s_restore_is_run_again_when_a_signal_cut_it_short() -> None:
    """A signal landing as the restore starts, before its own ``try``, left the finished
    run's handlers and its wakeup fd in place (a reversibility review). The run tries it
    again until it ran through, then raises what the signal's handler raised."""
    import pytest

    from leapgit.loop.drive import _until_done

    calls: list[int] = []

    def restore() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # the handler of a signal due as it started

    with pytest.raises(KeyboardInterrupt):
        _until_done(restore)
    assert calls == [1, 1]
