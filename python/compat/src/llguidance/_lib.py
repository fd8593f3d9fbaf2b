"""`llguidance._lib` over llg_rs: re-exports `llg_rs._lib`."""

from llg_rs._lib import *  # noqa: F401,F403
