"""Legacy coroutines awaited from asyncio.run(); the cases live in asyncio_run_cases_py3.py,
which 2.7 cannot parse (``async def``)."""
from __future__ import absolute_import, division, print_function

import pytest

from tinytornado._compat import PY2

if PY2:
    pytest.skip('asyncio is Python 3 only', allow_module_level=True)

pytest.register_assert_rewrite('asyncio_run_cases_py3')
from asyncio_run_cases_py3 import *  # noqa: E402,F401,F403
