"""`llguidance._struct_tag` over llg_rs: re-exports `llg_rs._struct_tag`."""

from llg_rs._struct_tag import *  # noqa: F401,F403
from llg_rs._struct_tag import (  # noqa: F401  (the names llguidance._struct_tag has)
    StructTag,
)
