"""The secret gate (chain/format/secrets.py) and `add` / `add --batch` refusing what it finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import Cli
from secrets_corpus import CORPUS

from memory_chain.chain.format.newentry import NewEntry
from memory_chain.chain.format.secrets import SecretError, check, scan
from memory_chain.chain.store.ledger import Ledger

FAKE_AWS = "AKIA" + "Q7W2E4R6T8Y1U3I5"
FAKE_GH = "ghp_" + "x7Yb2Qm9Lk4Tz8Rw1Vn6Hs3Jd5Fg0Pc2Ae7B"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in {"memory.db", "memory.db-wal", "memory.db-shm"}
    }


def test_corpus_is_big_enough_and_labelled_both_ways() -> None:
    """The corpus has >= 150 strings, with secrets and non-secrets each well represented."""
    secrets = [c for c in CORPUS if c[1]]
    plain = [c for c in CORPUS if not c[1]]
    assert len(CORPUS) >= 150
    assert len(secrets) >= 60
    assert len(plain) >= 60


def test_corpus_recall_and_false_positive_rate() -> None:
    """>= 95 % of the corpus's secrets are blocked and <= 2 % of its non-secrets are."""
    secrets = [t for t, s, _ in CORPUS if s]
    plain = [t for t, s, _ in CORPUS if not s]
    missed = [t[:60] for t in secrets if not scan(t)]
    flagged = [t[:60] for t in plain if scan(t)]
    assert len(missed) / len(secrets) <= 0.05, missed
    assert len(flagged) / len(plain) <= 0.02, flagged


def test_the_corpora_are_big_and_varied_enough() -> None:
    """Issue 23: >= 500 labelled strings, secrets of >= 40 kinds, every part both ways."""
    from secret_corpora import PARTS

    rows = [r for part in PARTS.values() for r in part]
    assert len(rows) >= 500
    assert len({k for _, s, k in rows if s}) >= 40
    for name, part in PARTS.items():
        assert any(s for _, s, _ in part) and not all(s for _, s, _ in part), name


@pytest.mark.parametrize(
    "part", ["issue9", "tune1", "tune2", "tune3", "tune4", "tune5", "tune6", "tune7", "tune8"]
)
def test_every_tuning_part_is_held(part: str) -> None:
    """What the rules were tuned on stays blocked, and what is plain stays allowed."""
    from secret_corpora import TUNING

    rows = TUNING[part]
    missed = [t[:80] for t, s, _ in rows if s and not scan(t)]
    flagged = [t[:80] for t, s, _ in rows if not s and scan(t)]
    assert [] == missed
    assert [] == flagged


@pytest.mark.parametrize(("part", "least"), [("heldout", 0.90), ("heldout2", 0.85)])
def test_the_held_out_parts_as_measured(part: str, least: float) -> None:
    """The held-out parts (never tuned on) at the figures they first gave: 90.0 % and
    85.3 % blocked, no false positive. A change that lowers them is a regression; one
    that raises them is tuning on them, and must say so where the figures are
    (benchmarks/README.md)."""
    from secret_corpora import HELD_OUT, rates

    rows = HELD_OUT[part]
    blocked, false_positives = rates(rows, [bool(scan(t)) for t, _, _ in rows])
    assert blocked >= least
    assert false_positives <= 0.01


@pytest.mark.parametrize(
    "text",
    [
        "my password for the vpn is Tr0ub4dor&3",
        "Authorization: Basic ZGVwbG95OmM0cnIwdCFjYWtl",
        "redis://:s3cr3tPa55@cache:6379/0",
        "mysql -uroot -pS3cretPass sales",
        "Das Passwort für den Server lautet Winter2026!",
        "数据库密码是 Meadow70%x",
        "use Zx9#kQ2!mVr7 as the admin password for the NAS",
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + "Ab3+" * 22 + "==",
    ],
)
def test_structure_finds_what_lead_phrases_missed(text: str) -> None:
    """Issue 23's families: words between name and value, Basic auth, an empty URL user,
    CLI flags, other languages, the value before its name, connection strings."""
    assert scan(text), text


@pytest.mark.parametrize(
    "text",
    [
        "The AWS docs use AKIAIOSFODNN7EXAMPLE as the example key id.",
        "password = getpass.getpass('Password: ')",
        "the feature flag key is new-checkout-v2",
        "the account id is 8f14e45f-ceea-467f-a8f5-a3f1b2c3d4e5 (not secret)",
        "the agent's public key is ed25519:" + "3b6a27bc" * 8,
        'client_secret = "env:CLIENT_SECRET"',
        "Tokens are hashed with SHA-256 before they are stored.",
    ],
)
def test_structure_lets_near_secrets_through(text: str) -> None:
    assert [] == scan(text), text


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"key {FAKE_AWS} here", "AWS access key id"),
        (f"use {FAKE_GH}", "GitHub token"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==", "private key"),
        ("postgres://app:pa55word1@db/x", "password in a URL"),
        ("password=hunter22", "password"),
    ],
)
def test_kind_is_named(text: str, kind: str) -> None:
    """Each rule names what it found."""
    (finding,) = scan(text)
    assert kind == finding.kind


def test_error_names_kind_and_position_never_the_value() -> None:
    """The refusal says which kind and where (line, column), and never echoes the secret."""
    text = f"first line\nthe key is {FAKE_AWS}."
    with pytest.raises(SecretError) as info:
        check(text)
    message = info.value.message
    assert "AWS access key id at line 2, column 12" in message
    assert FAKE_AWS not in message
    assert FAKE_AWS not in (info.value.hint or "")


def test_ledger_add_refuses_and_writes_nothing(ledger: Ledger) -> None:
    """Ledger.add refuses a secret in content or metadata; chain and blobs stay as they were."""
    before = _snapshot(ledger.layout.root)
    with pytest.raises(SecretError):
        ledger.add(NewEntry(content=f"deploy with {FAKE_GH}".encode()))
    with pytest.raises(SecretError, match="metadata"):
        ledger.add(NewEntry(content=b"the deploy token", meta={"token": FAKE_GH}))
    assert before == _snapshot(ledger.layout.root)


def test_ledger_add_allow_secret_commits(ledger: Ledger) -> None:
    """allow_secret=True is the explicit override."""
    r = ledger.add(NewEntry(content=f"deploy with {FAKE_GH}".encode()), allow_secret=True)
    assert 1 == r.seq


def test_cli_add_refuses_secret_chain_byte_identical(raw: Cli) -> None:
    """`add` with a secret exits 2 with one line naming the kind; chain.jsonl is unchanged."""
    before = _snapshot(raw.root)
    result = raw.run("add", f"The CI key is {FAKE_AWS}")
    assert 2 == result.code
    assert "AWS access key id" in result.err
    assert FAKE_AWS not in result.err + result.out
    assert result.err.startswith("error: ")
    assert before == _snapshot(raw.root)


def test_cli_batch_refuses_whole_batch(raw: Cli, tmp_path: Path) -> None:
    """One secret in a batch refuses the whole batch (all or nothing), naming its item."""
    batch = tmp_path / "batch.jsonl"
    lines = [{"content": "fine"}, {"content": f"password={FAKE_GH[:12]}"}, {"content": "also"}]
    batch.write_text("\n".join(json.dumps(x) for x in lines))
    before = _snapshot(raw.root)
    result = raw.run("add", "--batch", str(batch))
    assert 2 == result.code
    assert "batch item 2" in result.err
    assert "password" in result.err
    assert before == _snapshot(raw.root)


def test_cli_allow_secret_is_loud(raw: Cli) -> None:
    """--allow-secret commits, and warns on stderr that it is permanent."""
    result = raw.run("add", f"The CI key is {FAKE_AWS}", "--allow-secret")
    assert 0 == result.code, result.err
    assert "warning: --allow-secret" in result.err
    assert "permanently" in result.err
    assert FAKE_AWS not in result.err


def test_a_file_name_is_screened_and_never_echoed(tmp_path: Path) -> None:
    """Issue 23: names are stored too (a memory tool's file name, a section heading)."""
    from memory_chain.workspace.ops import check_section
    from memory_chain.workspace.sandbox import SandboxError, resolve

    with pytest.raises(SandboxError) as refused:
        resolve(tmp_path, f"memory/{FAKE_GH}.md")
    assert FAKE_GH not in str(refused.value) and "GitHub token" in str(refused.value)
    assert resolve(tmp_path, "memory/token-rotation.md").name == "token-rotation.md"
    with pytest.raises(SecretError):
        check_section(f"Deploy {FAKE_GH}")
