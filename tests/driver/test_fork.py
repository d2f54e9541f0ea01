"""A fork while another thread makes a derivative (issue 27, item 12).

The thread making a derivative holds the pipeline's lock (and has the cyclic garbage collector paused); a child
forked then has the lock held by a thread that does not exist in it, and deadlocked on its first derivative. The
child now gets a free lock and the collector on again (os.register_at_fork in s2s/driver/pipeline.py,
s2s/driver/compile.py, s2s/frontend/depth.py).
"""
import gc
import os
import threading
import time
import warnings

import pytest

import s2s
from s2s.driver import pipeline

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")


def _big_function(make_fn, n=40):
    lines = ["def big(x):", "    y = x"]
    lines += [f"    y = y * 0.999 + np.sin(y) * {k % 7 + 1}.0" for k in range(n)]
    lines.append("    return y")
    return make_fn("\n".join(lines) + "\n")


def _wait_until_held(lock, thread, timeout=60.0):
    """Until another thread holds lock (it is making a derivative); False if it finished first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and thread.is_alive():
        if lock.acquire(blocking=False):
            lock.release()
            time.sleep(0.0005)
            continue
        return True
    return False


def _wait_for_child(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def test_a_child_forked_while_a_thread_makes_a_derivative_makes_its_own(make_fn):
    big = _big_function(make_fn)

    def small(x):
        return x * x * x

    errors = []

    def work():
        try:
            errors.append(s2s.grad(big)(0.5) is None)
        except BaseException as exc:      # noqa: BLE001 - reported by the test
            errors.append(exc)

    for attempt in range(5):      # the thread must hold the lock when the main thread forks
        thread = threading.Thread(target=work)
        thread.start()
        held = _wait_until_held(pipeline._LOCK, thread)
        if held:
            break
        thread.join()
        big = _big_function(make_fn, 40 + attempt)       # a new function: not in the cache
    assert held, "the thread never held the lock"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)     # (Python 3.12: a fork of a threaded process)
        pid = os.fork()
    if pid == 0:            # the child: only this thread is left
        code = 1
        try:
            ok = s2s.grad(small)(2.0) == 12.0 and s2s.grad(small, mode="reverse")(1.0) == 3.0 and gc.isenabled()
            code = 0 if ok else 1
        except BaseException:        # noqa: BLE001
            code = 2
        finally:
            os._exit(code)
    exit_code = _wait_for_child(pid, timeout=60.0)
    thread.join()
    assert exit_code == 0, "the child deadlocked" if exit_code is None else f"the child exited with {exit_code}"
    assert errors == [False]         # the parent's thread finished its derivative too
    assert gc.isenabled()
