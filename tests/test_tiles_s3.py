"""A log published to an S3-compatible store (issue 29, integrations/s3_store.py), against
moto's S3 in process (no AWS account, no network): the same objects as a folder, the
checkpoint last and never cached, and every check and cosignature through the store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import Cli
from helpers.tiles import WITNESS, WITNESS_SEED, grow, owned_ledger, witness_key

from memory_chain.chain.audit.publishing import check_published, cosign, publish
from memory_chain.chain.format.errors import OperationalError
from memory_chain.chain.log.cosignature import NOTE_ED25519, parse_vkey
from memory_chain.chain.store.ledger import Ledger

moto = pytest.importorskip("moto", reason="moto is in the dev extra; CI installs it")
boto3 = pytest.importorskip("boto3", reason="boto3 is the s3 extra; CI installs it")

from memory_chain.integrations.s3_store import S3Store  # noqa: E402


@pytest.fixture(autouse=True)
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """moto's S3, with made-up credentials, and the bucket `agent-logs`."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("MEMORY_CHAIN_STATE_DIR", str(tmp_path / "state"))
    with moto.mock_aws():
        boto3.client("s3").create_bucket(Bucket="agent-logs")
        yield


def objects() -> dict[str, dict[str, str]]:
    client = boto3.client("s3")
    out = {}
    for item in client.list_objects_v2(Bucket="agent-logs").get("Contents", []):
        head = client.head_object(Bucket="agent-logs", Key=item["Key"])
        out[item["Key"]] = {"type": head["ContentType"], "cache": head.get("CacheControl", "")}
    return out


def test_publish_check_and_cosign_in_a_bucket(tmp_path: Path) -> None:
    ledger: Ledger = owned_ledger(tmp_path / "chain")
    store = S3Store("s3://agent-logs/alice")
    done = publish(ledger, store)
    assert "s3://agent-logs/alice" == done.folder
    stored = objects()
    assert {
        "alice/checkpoint",
        "alice/tile/0/000",
        "alice/tile/0/001.p/44",
        "alice/tile/1/000.p/1",
        "alice/tile/entries/000",
        "alice/tile/entries/001.p/44",
    } == set(stored)
    assert ("text/plain; charset=utf-8", "no-cache") == tuple(stored["alice/checkpoint"].values())
    assert stored["alice/tile/0/000"]["cache"].endswith("immutable")
    log = parse_vkey(done.vkey, NOTE_ED25519)
    cosign(store, name=WITNESS, seed=WITNESS_SEED, log_key=log, state=tmp_path / "w.json")
    publish(grow(ledger, 256), store)
    cosign(store, name=WITNESS, seed=WITNESS_SEED, log_key=log, state=tmp_path / "w.json")
    assert "alice/cosigned/300" in objects()
    checked = check_published(store, witnesses=[witness_key()], ledger=ledger)
    assert checked.ok, checked.failure
    assert [(WITNESS, 556)] == [(n, s) for n, s, _ in checked.witnesses]
    # a tile changed in the bucket is caught, as in a folder
    client = boto3.client("s3")
    tile = client.get_object(Bucket="agent-logs", Key="alice/tile/0/000")["Body"].read()
    client.put_object(Bucket="agent-logs", Key="alice/tile/0/000", Body=bytes(32) + tile[32:])
    assert "bad-tiles" == check_published(store).reason


def test_the_command_line_publishes_to_s3(raw: Cli, tmp_path: Path) -> None:
    raw.ok("add", "Staging runs on port 5433")
    out = raw.ok("publish", "s3://agent-logs/bob", "--json").json()
    assert ("s3://agent-logs/bob", 2, True) == (out["folder"], out["size"], out["new"])
    checked = raw.ok("verify", "--tiles", "s3://agent-logs/bob", "--json").json()
    assert checked["ok"] and 2 == checked["size"]
    assert "bob/checkpoint" in objects()


def test_a_bucket_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    """An error of the store is an OperationalError naming the object (one line, exit 2)."""
    ledger = owned_ledger(tmp_path / "chain", 3)
    with pytest.raises(OperationalError) as caught:
        publish(ledger, S3Store("s3://no-such-bucket/x"))
    assert caught.value.message.startswith("s3://no-such-bucket/x/checkpoint: ")
    assert "\n" not in caught.value.message
