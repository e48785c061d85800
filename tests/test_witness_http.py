"""A witness over HTTP (issue 29, c2sp.org/tlog-witness): `memory-chain witness serve` as
a real process on a loopback port, `publish --witness --witness-url` asking it, and the
add-checkpoint rules one by one (chain/log/cosigner.py, FORMAT.md 19.7)."""

from __future__ import annotations

import signal
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import SCRIPT, Cli
from helpers.tiles import (
    OTHER_WITNESS_SEED,
    WITNESS,
    WITNESS_SEED,
    grow,
    log_key_of,
    owned_ledger,
    rolled_back_pair,
    snapshot,
    witness_key,
)

from memory_chain.chain.audit.publishing import ask_witnesses, check_published, publish
from memory_chain.chain.format.keys import Signer
from memory_chain.chain.log.checkpoint import parse_checkpoint, sign_checkpoint
from memory_chain.chain.log.cosignature import COSIGNATURE, VerifierKey, private_key_text
from memory_chain.chain.log.cosigner import (
    SIZE_TYPE,
    Cosigner,
    Refused,
    add_checkpoint_body,
    parse_add_checkpoint,
)
from memory_chain.chain.log.merkle import SHA256, consistency_proof
from memory_chain.chain.log.tiles import read_leaf_hashes
from memory_chain.chain.store.ledger import Ledger
from memory_chain.integrations.witness_http import submitter


@pytest.fixture(autouse=True)
def state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "state"
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(path))
    return path


@pytest.fixture
def owned(tmp_path: Path) -> Ledger:
    return owned_ledger(tmp_path / "chain")


class Served:
    def __init__(self, url: str, state: Path) -> None:
        self.url = url
        self.state = state


@pytest.fixture
def served(owned: Ledger, tmp_path: Path) -> Iterator[tuple[Served, VerifierKey]]:
    """`memory-chain witness serve` following the owner's log, as a process on a free port."""
    log = log_key_of(owned, tmp_path / "first")
    key_file = tmp_path / "w1.key"
    key_file.write_text(private_key_text(WITNESS, COSIGNATURE, WITNESS_SEED))
    key_file.chmod(0o600)
    proc = subprocess.Popen(
        [SCRIPT, "witness", "serve", "--key", str(key_file), "--log", str(log), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    try:
        yield Served(url, Path(f"{key_file}.state.json")), log
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def ask(folder: Path, url: str) -> list[tuple[bool, str]]:
    return [(a.ok, a.message) for a in ask_witnesses(folder, [(witness_key(), submitter(url))])]


def test_a_log_asks_the_witness_and_grows(
    served: tuple[Served, VerifierKey], owned: Ledger, tmp_path: Path
) -> None:
    """First contact (old 0), then growth by 256 entries with a consistency proof from the
    size the folder shows the witness cosigned; each cosignature lands in the checkpoint."""
    server, _ = served
    folder = tmp_path / "log"
    publish(owned, folder)
    assert [(True, "cosigned size 300")] == ask(folder, server.url)
    publish(grow(owned, 256), folder)
    assert [(True, "cosigned size 556")] == ask(folder, server.url)
    checked = check_published(folder, witnesses=[witness_key()], ledger=owned)
    assert checked.ok, checked.failure
    assert [(WITNESS, 556)] == [(n, s) for n, s, _ in checked.witnesses]
    assert '"size":556' in server.state.read_text()


def test_a_rolled_back_log_is_refused_over_http(
    served: tuple[Served, VerifierKey], tmp_path: Path
) -> None:
    server, _ = served
    copy = rolled_back_pair(tmp_path / "chain2", tmp_path / "copy")
    # the witness follows the owner's log at 300 first: same key and genesis as the copy
    folder = tmp_path / "log"
    publish(Ledger(tmp_path / "chain2"), folder)
    assert [(True, "cosigned size 300")] == ask(folder, server.url)
    fresh = tmp_path / "rolled"
    publish(copy, fresh)
    before = snapshot(fresh)
    ((ok, message),) = ask(fresh, server.url)
    assert not ok and "rolled back" in message, message
    assert before == snapshot(fresh)


def test_a_forked_log_is_refused_over_http(
    served: tuple[Served, VerifierKey], tmp_path: Path
) -> None:
    server, _ = served
    copy = rolled_back_pair(tmp_path / "chain2", tmp_path / "copy")
    folder = tmp_path / "log"
    publish(Ledger(tmp_path / "chain2"), folder)
    assert [(True, "cosigned size 300")] == ask(folder, server.url)
    same_size = tmp_path / "fork300"
    publish(grow(copy, 100, word="other"), same_size)  # 300 entries, another history
    ((ok, message),) = ask(same_size, server.url)
    assert not ok and "409" in message, message
    larger = tmp_path / "fork350"
    publish(grow(copy, 50, word="more"), larger)
    ((ok, message),) = ask(larger, server.url)
    assert not ok and "422" in message, message
    assert "witnesses" == check_published(larger, witnesses=[witness_key()]).reason


def test_publish_with_a_witness_from_the_command_line(
    raw: Cli, tmp_path: Path, state_dir: Path
) -> None:
    """publish --witness --witness-url: the cosignature in the folder; an unreachable
    witness is reported and the command exits 1, the folder still published."""
    folder = tmp_path / "log"
    first = raw.ok("publish", str(folder), "--json").json()
    key_file = tmp_path / "w1.key"
    vkey = raw.ok("witness", "keygen", WITNESS, "--out", str(key_file)).out.strip()
    proc = subprocess.Popen(
        [
            SCRIPT,
            "witness",
            "serve",
            "--key",
            str(key_file),
            "--log",
            first["log_key"],
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        raw.ok("add", "a second memory")
        done = raw.ok("publish", str(folder), "--witness", vkey, "--witness-url", url, "--json")
        assert [{"name": WITNESS, "ok": True, "message": "cosigned size 2"}] == done.json()[
            "witnesses"
        ]
        result = raw.run("verify", "--tiles", str(folder), "--witness", vkey)
        assert 0 == result.code and "saw size 2" in result.out, result.err
        raw.ok("add", "a third memory")
        result = raw.run(
            "publish", str(folder), "--witness", vkey, "--witness-url", "http://127.0.0.1:9"
        )
        assert 1 == result.code and "cannot reach" in result.err, result.err
        assert 3 == parse_checkpoint((folder / "checkpoint").read_bytes()).size
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


# -- the rules, in process --------------------------------------------------------------------


@pytest.fixture
def cosigner(owned: Ledger, tmp_path: Path) -> tuple[Cosigner, VerifierKey, Path]:
    folder = tmp_path / "log"
    log = log_key_of(owned, folder)
    return Cosigner(WITNESS, WITNESS_SEED, [log], tmp_path / "w.json"), log, folder


def note_of(folder: Path) -> bytes:
    return (folder / "checkpoint").read_bytes()


def test_the_request_body_is_the_specs(cosigner: tuple[Cosigner, VerifierKey, Path]) -> None:
    _, _, folder = cosigner
    note = note_of(folder)
    body = add_checkpoint_body(0, [], note)
    assert body == b"old 0\n\n" + note
    parsed = parse_add_checkpoint(body)
    assert (0, []) == (parsed.old, parsed.proof)
    proof = [bytes([i]) * 32 for i in range(3)]
    parsed = parse_add_checkpoint(add_checkpoint_body(7, proof, note))
    assert (7, proof) == (parsed.old, parsed.proof)
    for bad in (
        b"old 01\n\n" + note,
        b"old -1\n\n" + note,
        b"new 0\n\n" + note,
        b"old 0\n" + note,
        b"old 0\nAAAA\n\n" + note,
        b"old 5\n" + b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n" * 64 + b"\n" + note,
        b"old 301\n\n" + note,
        b"old 0\n\nnot a note\n",
    ):
        with pytest.raises(Refused) as caught:
            parse_add_checkpoint(bad)
        assert 400 == caught.value.status, bad[:40]


def test_each_refusal_has_the_specs_status(
    cosigner: tuple[Cosigner, VerifierKey, Path], owned: Ledger, tmp_path: Path
) -> None:
    witness, _, folder = cosigner
    note = note_of(folder)
    cp = parse_checkpoint(note)
    # a log this witness does not follow: 404
    other = Cosigner(WITNESS, WITNESS_SEED, [], tmp_path / "other.json")
    with pytest.raises(Refused) as caught:
        other.add(parse_add_checkpoint(add_checkpoint_body(0, [], note)))
    assert 404 == caught.value.status
    # signed by another key: 403
    forged = sign_checkpoint(cp.origin, cp.size, cp.root, Signer(bytes([11]) * 32))
    with pytest.raises(Refused) as caught:
        witness.add(parse_add_checkpoint(add_checkpoint_body(0, [], forged.text)))
    assert 403 == caught.value.status
    # first sight, then the same again: both cosigned, one state
    line = witness.add(parse_add_checkpoint(add_checkpoint_body(0, [], note)))
    assert line.startswith(f"\u2014 {WITNESS} ")
    # the wrong old size: 409 with the witness's size
    with pytest.raises(Refused) as caught:
        witness.add(parse_add_checkpoint(add_checkpoint_body(0, [], note)))
    assert (409, b"300\n") == (caught.value.status, caught.value.body)
    assert "old-size" == caught.value.reason and SIZE_TYPE == "text/x.tlog.size"
    # a bad proof: 422
    publish(grow(owned, 20), folder)
    grown = note_of(folder)
    with pytest.raises(Refused) as caught:
        witness.add(parse_add_checkpoint(add_checkpoint_body(300, [bytes(32)] * 3, grown)))
    assert 422 == caught.value.status
    # the right proof: cosigned, and the state moves on
    gcp = parse_checkpoint(grown)
    leaves = read_leaf_hashes(folder, gcp.size, gcp.root)
    proof = consistency_proof(SHA256, leaves, 300)
    witness.add(parse_add_checkpoint(add_checkpoint_body(300, proof, grown)))
    assert (320, gcp.root) == witness.seen(gcp.origin)


def test_two_requests_at_once_cannot_roll_the_witness_back(
    cosigner: tuple[Cosigner, VerifierKey, Path], owned: Ledger
) -> None:
    """The old size is checked and the state written under one lock: of two requests from
    the same old size, one is cosigned and the other answered 409 (the spec's race)."""
    witness, _, folder = cosigner
    witness.add(parse_add_checkpoint(add_checkpoint_body(0, [], note_of(folder))))
    bodies = []
    for extra in (10, 20):
        publish(grow(owned, 10), folder)
        cp = parse_checkpoint(note_of(folder))
        leaves = read_leaf_hashes(folder, cp.size, cp.root)
        bodies.append(add_checkpoint_body(300, consistency_proof(SHA256, leaves, 300), cp.text))
        assert cp.size == 300 + extra
    results: list[int] = []

    def run(body: bytes) -> None:
        try:
            witness.add(parse_add_checkpoint(body))
            results.append(200)
        except Refused as exc:
            results.append(exc.status)

    threads = [threading.Thread(target=run, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [200, 409] == sorted(results)
    assert witness.seen(parse_checkpoint(note_of(folder)).origin)[0] in (310, 320)


def test_the_server_answers_409_with_its_size(
    served: tuple[Served, VerifierKey], owned: Ledger, tmp_path: Path
) -> None:
    server, _ = served
    folder = tmp_path / "log"
    publish(owned, folder)
    ask(folder, server.url)
    request = urllib.request.Request(
        server.url + "/add-checkpoint",
        data=add_checkpoint_body(0, [], note_of(folder)),
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=20)
    assert 409 == caught.value.code
    assert caught.value.headers["Content-Type"].startswith("text/x.tlog.size")
    assert b"300\n" == caught.value.read()
    assert OTHER_WITNESS_SEED != WITNESS_SEED
