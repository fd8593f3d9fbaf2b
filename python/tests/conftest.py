import numpy as np
import pytest

import llg_rs


@pytest.fixture(scope="session")
def byte_tok():
    return llg_rs.LLTokenizer("byte")


@pytest.fixture(scope="session")
def o200k():
    return llg_rs.LLTokenizer("o200k")


def bits(mask: bytes):
    """The set bit indices of a little-endian u32 bitmask."""
    return np.flatnonzero(np.unpackbits(np.frombuffer(mask, np.uint8), bitorder="little")).tolist()


def row_bits(row) -> list:
    return bits(np.ascontiguousarray(row).tobytes())
