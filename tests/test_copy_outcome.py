"""The kernel's one helper that copies a done Future's outcome onto another
(`_kernel.copy_outcome`), for every kind of Future it is given: tinytornado's,
concurrent.futures' (the `futures` backport on 2.7) and, on 3.x, asyncio's."""
from __future__ import absolute_import, division, print_function

import sys

import pytest

from tinytornado._compat import PY2, futures
from tinytornado._kernel import CancelledError, Future, copy_outcome

if not PY2:
    import asyncio

    from tinytornado.platform.asyncio import to_tinytornado_future


class Failure(Exception):
    pass


def raised_exc_info():
    try:
        raise Failure('copied')
    except Failure:
        return sys.exc_info()


def tinytornado_source(outcome):
    source = Future()
    if outcome == 'result':
        source.set_result(7)
    elif outcome == 'failure':
        source.set_exc_info(raised_exc_info())
    else:
        source.cancel()
    return source


def concurrent_source(outcome):
    source = futures.Future()
    if outcome == 'result':
        source.set_result(7)
    elif outcome == 'failure':
        exc_info = raised_exc_info()
        if hasattr(source, 'set_exception_info'):  # the 2.7 backport keeps the traceback so
            source.set_exception_info(exc_info[1], exc_info[2])
        else:
            source.set_exception(exc_info[1])
    else:
        source.cancel()
    return source


@pytest.fixture
def asyncio_loop():
    if PY2:
        pytest.skip('asyncio is Python 3 only')
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def asyncio_source(loop, outcome):
    source = loop.create_future()
    if outcome == 'result':
        source.set_result(7)
    elif outcome == 'failure':
        source.set_exception(raised_exc_info()[1])
    else:
        source.cancel()
    return source


def source_traceback(source):
    """The traceback the failed `source` holds, however its kind keeps it."""
    if isinstance(source, Future):
        return source.exc_info()[2]
    if hasattr(source, 'exception_info'):
        return source.exception_info()[1]
    return source.exception().__traceback__


def check_copied(source, target, outcome):
    assert target.done()
    if outcome == 'result':
        assert target.result() == 7
    elif outcome == 'cancelled':
        assert target.cancelled()
    else:
        exception = target.exception()
        assert type(exception) is Failure and exception is source.exception()
        if isinstance(target, Future):  # it keeps exc_info: the traceback comes along
            assert target.exc_info()[2] is source_traceback(source) is not None


OUTCOMES = ['result', 'failure', 'cancelled']
MAKE_SOURCE = {'tinytornado': tinytornado_source, 'concurrent': concurrent_source}
MAKE_TARGET = {'tinytornado': Future, 'concurrent': futures.Future}


@pytest.mark.parametrize('outcome', OUTCOMES)
@pytest.mark.parametrize('target_kind', sorted(MAKE_TARGET))
@pytest.mark.parametrize('source_kind', sorted(MAKE_SOURCE))
def test_each_outcome_is_copied_between_tinytornado_and_concurrent_futures(
        source_kind, target_kind, outcome):
    source, target = MAKE_SOURCE[source_kind](outcome), MAKE_TARGET[target_kind]()
    copy_outcome(source, target)
    check_copied(source, target, outcome)


@pytest.mark.parametrize('outcome', OUTCOMES)
def test_each_outcome_is_copied_from_asyncio(asyncio_loop, outcome):
    source, target = asyncio_source(asyncio_loop, outcome), Future()
    copy_outcome(source, target)
    check_copied(source, target, outcome)


@pytest.mark.parametrize('outcome', OUTCOMES)
def test_each_outcome_is_copied_to_asyncio(asyncio_loop, outcome):
    source, target = tinytornado_source(outcome), asyncio_loop.create_future()
    copy_outcome(source, target)
    check_copied(source, target, outcome)


@pytest.mark.parametrize('outcome', OUTCOMES)
@pytest.mark.parametrize('target_kind', sorted(MAKE_TARGET))
def test_a_done_target_is_left_alone(target_kind, outcome):
    target = MAKE_TARGET[target_kind]()
    target.set_result('first')
    source = tinytornado_source(outcome)
    copy_outcome(source, target)
    assert target.result() == 'first'
    if not source.cancelled():
        source.exception()  # retrieved: nothing to log


def test_a_cancelled_source_asks_the_targets_canceller():
    asked = []
    target = Future()
    target.set_canceller(lambda: asked.append('asked') or False)  # it refuses
    copy_outcome(tinytornado_source('cancelled'), target)
    assert asked == ['asked'] and not target.done()

    target.set_canceller(lambda: asked.append('accepted') or target.set_cancelled() or True)
    copy_outcome(tinytornado_source('cancelled'), target)
    assert asked == ['asked', 'accepted'] and target.cancelled()
    with pytest.raises(CancelledError):
        target.result()


# -- the asyncio bridge, which copies through it both ways ---------------------------------

def run_one_pass(loop):
    loop.run_until_complete(asyncio.sleep(0))


def test_an_asyncio_future_cancelled_before_or_after_the_bridge_cancels_ours(asyncio_loop):
    cancelled_before = asyncio_loop.create_future()
    cancelled_before.cancel()
    assert to_tinytornado_future(cancelled_before).cancelled()

    cancelled_after = asyncio_loop.create_future()
    future = to_tinytornado_future(cancelled_after)
    cancelled_after.cancel()
    run_one_pass(asyncio_loop)  # asyncio runs done callbacks a pass later
    assert future.cancelled()


def test_cancelling_ours_cancels_the_asyncio_future_then_ours(asyncio_loop):
    asyncio_future = asyncio_loop.create_future()
    future = to_tinytornado_future(asyncio_future)
    assert future.cancel()
    assert asyncio_future.cancelled()
    run_one_pass(asyncio_loop)
    assert future.cancelled()


def test_cancelling_ours_once_the_asyncio_future_succeeded_is_refused(asyncio_loop):
    asyncio_future = asyncio_loop.create_future()
    future = to_tinytornado_future(asyncio_future)
    asyncio_future.set_result(3)
    assert not future.cancel()  # its outcome is on its way
    run_one_pass(asyncio_loop)
    assert future.result() == 3
