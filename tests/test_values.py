"""The records that replaced dataclasses on the start path behave as the dataclasses did.

chain/format/values.py: equality and repr by field, a frozen record's hash,
immutability, replace() and pickling; a subclass's fields after its base's;
a checkpoint's label outside equality but kept by a copy.
"""

from __future__ import annotations

import copy
import pickle

import pytest

from memory_chain.chain.format.values import FrozenError, fields_of
from memory_chain.chain.lifecycle.archive import ArchiveReport
from memory_chain.chain.log.checkpoint import Checkpoint
from memory_chain.chain.verify.lines import ChainState, Failure, Report
from memory_chain.index.sync import State


def test_a_value_is_compared_hashed_frozen_copied_and_pickled() -> None:
    f = Failure(3, 5, "broken-link", "prev does not match")
    assert f == Failure(3, 5, "broken-link", "prev does not match")
    assert f != Failure(3, 5, "broken-link", "another message")
    assert f != ("3", 5)  # another class: not equal
    assert len({f, Failure(3, 5, "broken-link", "prev does not match")}) == 1
    assert "Failure(seq=3, step=5, reason='broken-link'" in repr(f)
    with pytest.raises(FrozenError):
        f.seq = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del f.step  # type: ignore[misc]
    for again in (pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f)):
        assert again == f and again is not f
    assert f.replace(seq=9) == Failure(9, 5, "broken-link", "prev does not match")
    with pytest.raises(TypeError, match="no field"):
        f.replace(nope=1)


def test_a_subclass_has_its_bases_fields_first() -> None:
    assert fields_of(ArchiveReport)[: len(fields_of(Report))] == fields_of(Report)
    a = ArchiveReport(
        ok=True, size=5, head="b3:x", chain_id="b3:y", key="k", failure=None, torn_tail=0, blobs=2
    )
    b = a.replace(verified_from=3, root=None)
    assert (b.verified_from, b.blobs, b.size, type(b)) == (3, 2, 5, ArchiveReport)
    assert pickle.loads(pickle.dumps(b)) == b
    assert a != Report(True, 5, "b3:x", "b3:y", "k", None, 0)  # another class


def test_a_checkpoints_label_is_not_compared_but_kept() -> None:
    one = Checkpoint("memory-chain/ab", 4, b"r" * 32, b"note", b"body", (), "the stored one")
    other = one.with_label("the exported one")
    assert one == other and hash(one) == hash(other)
    assert pickle.loads(pickle.dumps(one)).label == "the stored one"
    assert one.replace(size=5).label == "the stored one"
    assert one.replace(size=5) != one


def test_a_mutable_record_is_compared_not_hashed() -> None:
    s = State(size=3, offset=10)
    assert s == State(3, 10) and s != State(3, 11)
    s.size = 4
    assert s == State(4, 10)
    with pytest.raises(TypeError):
        hash(s)
    state = ChainState()
    assert state.digests == bytearray() and state.digests is not ChainState().digests
    assert pickle.loads(pickle.dumps(s)) == s
