"""The kernel's seams (tinytornado/_kernel.py): what the layers below the loop and the loop
itself find above them is looked up when needed, never patched in at import time, so it
does not depend on which module a program imported first.

Each case runs in a fresh interpreter: in this one every module is imported already.
"""
from __future__ import absolute_import, division, print_function

import json
import subprocess
import sys
import textwrap

from tinytornado import _kernel
from tinytornado.ioloop import IOLoop


def run_fresh(code):
    """What `code`, run in a new interpreter, prints (as JSON) on its last line."""
    output = subprocess.check_output([sys.executable, '-c', textwrap.dedent(code)])
    return json.loads(output.decode('utf-8').strip().splitlines()[-1])


def test_current_loop_below_the_loop_is_ioloop_current():
    loop = IOLoop(make_current=False)
    try:
        loop.make_current()
        assert _kernel.current_loop() is IOLoop.current() is loop
        assert _kernel.thread_state.instance is loop
    finally:
        IOLoop.clear_current()
        loop.close()


def test_chain_future_reaches_the_loop_though_only_concurrent_was_imported():
    # concurrent.futures' Future resolves on another thread: chain_future hands it over
    # through the current loop, which the kernel loads by name (it once had to be patched
    # in by importing tinytornado.ioloop, and without that was an error).
    result = run_fresh('''
        import json, sys, threading
        from tinytornado._compat import futures
        from tinytornado.concurrent import Future, chain_future
        loaded_before = 'tinytornado.ioloop' in sys.modules
        source, target = futures.Future(), Future()
        chain_future(source, target)
        from tinytornado.ioloop import IOLoop
        threading.Timer(0.05, source.set_result, [42]).start()
        result = IOLoop.current().run_sync(lambda: target, timeout=30)
        print(json.dumps([loaded_before, result, 'tinytornado.gen' in sys.modules]))
    ''')
    assert result == [False, 42, False]


RUN_SYNC_CASES = '''
    import json, sys
    {first_import}
    from tinytornado.concurrent import Future
    from tinytornado.ioloop import IOLoop

    def done(value):
        future = Future()
        future.set_result(value)
        return future

    def failing():
        future = Future()
        future.set_exception(ValueError('from a callback'))
        return [future]

    loop = IOLoop()
    failures = []
    loop.handle_callback_exception = lambda callback: failures.append(
        str(sys.exc_info()[1]))
    answers = [
        loop.run_sync(lambda: [done(1), done(2)]),
        sorted(loop.run_sync(lambda: {{'a': done(1), 'b': done(2)}}).items()),
        loop.run_sync(lambda: None),
    ]
    try:
        loop.run_sync(lambda: 'not yieldable')
    except Exception as e:
        answers.append(type(e).__name__)
    loop.add_callback(failing)
    loop.add_callback(lambda: 'a plain value, ignored')
    loop.run_sync(lambda: done(None))
    answers.append(failures)
    print(json.dumps(answers))
'''


def test_what_run_sync_and_callbacks_accept_does_not_depend_on_importing_gen_first():
    without_gen = run_fresh(RUN_SYNC_CASES.format(first_import=''))
    gen_first = run_fresh(RUN_SYNC_CASES.format(first_import='import tinytornado.gen'))
    assert without_gen == gen_first == [
        [1, 2], [['a', 1], ['b', 2]], None, 'BadYieldError', ['from a callback']]
