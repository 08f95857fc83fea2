from __future__ import absolute_import, division, print_function

import gc
import threading
import traceback
import weakref

import pytest

from tinytornado._compat import futures, get_ident
from tinytornado._kernel import (
    FAILED, NOT_DONE, _TracebackLogger, done_future, pending_future, resolve,
    set_new_exception,
)
from tinytornado.concurrent import (
    CancelledError, Future, InvalidStateError, TimeoutError, chain_future,
    future_add_done_callback,
    future_set_exc_info, future_set_exception_unless_cancelled,
    future_set_result_unless_cancelled, is_future,
)


def raise_value_error_deep():
    raise ValueError('deep')


def failed_future():
    future = Future()
    try:
        raise_value_error_deep()
    except ValueError:
        import sys
        future.set_exc_info(sys.exc_info())
    return future


def test_result_and_callbacks_in_order():
    future = Future()
    trace = []
    future.add_done_callback(lambda f: trace.append(('a', f.result())))
    future.add_done_callback(lambda f: trace.append(('b', f.result())))
    assert not future.done() and future.running()
    future.set_result(3)
    assert trace == [('a', 3), ('b', 3)]
    future.add_done_callback(lambda f: trace.append(('late', f.result())))
    assert trace[-1] == ('late', 3)
    assert future.done() and not future.running() and not future.cancelled()
    assert future.exception() is None and future.exc_info() is None


def test_result_before_done_is_an_error():
    with pytest.raises(InvalidStateError):
        Future().result()


def test_setting_twice_is_a_clear_error():
    future = Future()
    future.set_result(1)
    with pytest.raises(InvalidStateError) as info:
        future.set_result(2)
    assert 'already done' in str(info.value)
    with pytest.raises(InvalidStateError):
        future.set_exception(ValueError())
    assert future.result() == 1
    with pytest.raises(InvalidStateError) as info:
        future.set_cancelled()
    assert 'set_cancelled() on a Future that is already done' in str(info.value)
    cancelled = Future()
    cancelled.set_cancelled()
    with pytest.raises(InvalidStateError) as info:
        cancelled.set_cancelled()
    assert 'already cancelled' in str(info.value) and cancelled.cancelled()


def test_result_reraises_with_original_traceback():
    future = failed_future()
    with pytest.raises(ValueError) as info:
        future.result()
    names = [frame[2] for frame in traceback.extract_tb(info.tb)]
    assert 'raise_value_error_deep' in names
    assert isinstance(future.exception(), ValueError)
    assert future.exc_info()[0] is ValueError


def test_callback_exception_is_logged_and_others_still_run(app_log_records):
    future = Future()
    trace = []

    def bad(f):
        raise RuntimeError('callback broke')
    future.add_done_callback(bad)
    future.add_done_callback(lambda f: trace.append('ran'))
    future.set_result(None)
    assert trace == ['ran']
    assert any('callback broke' in str(r.exc_info[1]) for r in app_log_records)


def test_cancel_plain_future():
    future = Future()
    trace = []
    future.add_done_callback(lambda f: trace.append(f.cancelled()))
    assert future.cancel() is True
    assert future.cancelled() and future.done()
    assert trace == [True]
    with pytest.raises(CancelledError):
        future.result()
    with pytest.raises(CancelledError):
        future.exception()
    assert future.cancel() is False


def test_cancel_done_future_returns_false():
    future = Future()
    future.set_result(1)
    assert future.cancel() is False
    assert future.result() == 1


def test_canceller_decides():
    future = Future()
    calls = []

    def canceller():
        calls.append(1)
        return False
    future.set_canceller(canceller)
    assert future.cancel() is False
    assert calls == [1] and not future.done()
    future.set_result(5)
    assert future.result() == 5


def test_unretrieved_exception_is_logged_when_collected(app_log_records):
    future = failed_future()
    ref = weakref.ref(future)
    del future
    gc.collect()
    assert ref() is None, 'the Future must not be kept alive'
    messages = [r.getMessage() for r in app_log_records]
    assert any('never retrieved' in m and 'raise_value_error_deep' in m for m in messages)


def test_a_new_exception_never_retrieved_is_logged_and_a_retrieved_one_is_not(
        app_log_records):
    # set_new_exception formats the text only at collection, on 2.7 as well.
    retrieved, dropped = Future(), Future()
    set_new_exception(retrieved, TimeoutError('retrieved'))
    set_new_exception(dropped, TimeoutError('dropped'))
    assert isinstance(retrieved.exception(), TimeoutError)
    with pytest.raises(InvalidStateError):
        set_new_exception(retrieved, TimeoutError('twice'))
    ref = weakref.ref(dropped)
    del retrieved, dropped
    gc.collect()
    assert ref() is None, 'the Future must not be kept alive'
    messages = [r.getMessage() for r in app_log_records]
    assert len(messages) == 1
    assert 'never retrieved' in messages[0] and 'TimeoutError: dropped' in messages[0]


def test_traceback_logger_never_initialised_logs_nothing(app_log_records):
    # What a RecursionError at the __init__ call leaves behind: no slot is set.
    logger = _TracebackLogger.__new__(_TracebackLogger)
    logger.__del__()  # Must not raise AttributeError.
    assert app_log_records == []


def test_retrieved_exception_is_not_logged(app_log_records):
    future = failed_future()
    future.exception()
    del future
    gc.collect()
    assert app_log_records == []


def test_cancelled_future_is_not_logged(app_log_records):
    future = Future()
    future.cancel()
    del future
    gc.collect()
    assert app_log_records == []


def test_unless_cancelled_helpers(app_log_records):
    future = Future()
    future.cancel()
    future_set_result_unless_cancelled(future, 1)
    future_set_exception_unless_cancelled(future, ValueError('late'))
    assert future.cancelled()
    assert any('late' in str(r.exc_info[1]) for r in app_log_records)
    live = Future()
    future_set_result_unless_cancelled(live, 2)
    assert live.result() == 2


def test_future_set_exc_info_on_concurrent_future():
    target = futures.Future()
    future_set_exc_info(target, failed_future().exc_info())
    assert isinstance(target.exception(), ValueError)


def test_is_future():
    assert is_future(Future())
    assert is_future(futures.Future())
    assert not is_future(object())


def test_chain_future_copies_result_exception_and_cancellation():
    source, target = Future(), Future()
    chain_future(source, target)
    source.set_result(7)
    assert target.result() == 7

    source, target = failed_future(), Future()
    chain_future(source, target)
    with pytest.raises(ValueError):
        target.result()

    source, target = Future(), Future()
    chain_future(source, target)
    source.cancel()
    assert target.cancelled()


def test_chain_future_from_done_concurrent_future_copies_at_once():
    source, target = futures.Future(), Future()
    source.set_exception(KeyError('k'))
    chain_future(source, target)
    assert isinstance(target.exception(), KeyError)


def test_chain_future_from_pending_concurrent_future_resolves_on_the_loop(io_loop):
    source, target = futures.Future(), Future()
    chain_future(source, target)
    threads = []
    target.add_done_callback(lambda f: threads.append(get_ident()))
    worker = threading.Thread(target=source.set_result, args=(7,))
    worker.start()
    worker.join()
    assert not target.done(), 'resolved on the worker thread, not through the loop'
    assert io_loop.run_sync(lambda: target) == 7
    assert threads == [get_ident()]


def test_future_add_done_callback_on_done_concurrent_future_calls_at_once():
    source = futures.Future()
    source.set_result(3)
    trace = []
    future_add_done_callback(source, lambda f: trace.append(f.result()))
    assert trace == [3]

    def broken(f):
        raise ZeroDivisionError('reaches the caller')
    with pytest.raises(ZeroDivisionError):
        future_add_done_callback(source, broken)


def test_future_add_done_callback_on_pending_futures():
    for future in (Future(), futures.Future()):
        trace = []
        future_add_done_callback(future, trace.append)
        assert trace == []
        future.set_result(1)
        assert trace == [future]


def test_chain_future_leaves_done_target_alone():
    source, target = Future(), Future()
    chain_future(source, target)
    target.set_result('first')
    source.set_result('second')
    assert target.result() == 'first'


def test_remove_done_callback():
    future = Future()
    trace = []

    def cb(f):
        trace.append(1)
    future.add_done_callback(cb)
    future.add_done_callback(cb)
    assert future.remove_done_callback(cb) == 2
    future.set_result(None)
    assert trace == []
    assert future.remove_done_callback(cb) == 0


# -- The internal fast paths gen and iostream use ---------------------------------------

def test_outcome_is_the_result_or_says_why_there_is_none():
    succeeded, failed, cancelled = Future(), failed_future(), Future()
    assert succeeded._outcome is NOT_DONE
    succeeded.set_result(None)
    cancelled.cancel()
    assert [future._outcome for future in (succeeded, failed, cancelled)] == [
        None, FAILED, FAILED]
    assert isinstance(failed.exception(), ValueError)  # Retrieved: it logs nothing.
    assert done_future(FAILED).result() is FAILED  # A result, whatever it is.


def test_a_done_future_made_in_one_call_is_a_resolved_future():
    future = done_future('value')
    assert future.done() and not future.cancelled()
    assert future.result() == 'value' and future.exc_info() is None
    assert future._outcome == 'value'
    seen = []
    future.add_done_callback(seen.append)
    assert seen == [future]
    assert 'value' in repr(future)


def test_a_pending_future_asks_its_canceller_and_forgets_it_when_resolved():
    answers = [False, True]
    future = pending_future(lambda: answers.pop(0))
    assert not future.done() and future._outcome is NOT_DONE
    assert future.cancel() is False  # Refused: still pending.
    assert future.cancel() is True and not future.done()  # Accepted, resolved later.
    resolve(future, 'late')
    assert future.result() == 'late'
    assert future.cancel() is False and answers == []


def test_resolve_runs_the_callbacks_once_and_leaves_a_done_future_as_it_is(
        app_log_records):
    trace = []
    future = Future()
    future.add_done_callback(lambda done: trace.append(('first', done.result())))
    future.add_done_callback(lambda done: 1 / 0)
    future.add_done_callback(lambda done: trace.append(('last', done.result())))
    resolve(future, 7)
    resolve(future, 8)
    assert trace == [('first', 7), ('last', 7)]
    assert [record.exc_info[0] for record in app_log_records] == [ZeroDivisionError]
    cancelled = Future()
    cancelled.cancel()
    resolve(cancelled, 9)
    assert cancelled.cancelled()
