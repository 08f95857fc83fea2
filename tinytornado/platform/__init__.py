"""Bridges between tinytornado and other event loops (see `tinytornado.platform.asyncio`)."""
from __future__ import absolute_import, division, print_function

__all__ = []
