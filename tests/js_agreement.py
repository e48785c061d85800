"""The cases on which the Python and JavaScript verifiers must agree.

`build(folder)` writes every case into ``folder`` (chains as data
directories, bundles, consistency files, export archives; each valid or
tampered in one named way, plus seeded random byte flips) and returns
them with the Python verdict. `run_js` runs auditor/verifier-js/cli.mjs
once over all of them. The table of named cases is kept in
specs/VERIFIER-AGREEMENT.md; `python tests/js_agreement.py --write`
writes it again, and tests/test_js_agreement.py checks that it is
current and that every row agrees.

Everything is deterministic: fixed seeds (TEST ONLY keys), a fixed clock,
seeded mutations.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

ROOT = Path(__file__).resolve().parent.parent
CLI_JS = ROOT / "auditor" / "verifier-js" / "cli.mjs"
TABLE = ROOT / "specs" / "VERIFIER-AGREEMENT.md"
GOLDEN = ROOT / "tests" / "vectors" / "golden"
CLOCK = 1767225600000000
L_ORDER = 2**252 + 27742317777372353535851937790883648493
MUTATIONS = {"chain": 150, "bundle": 100, "archive": 50}


@dataclass
class Case:
    name: str
    kind: str  # chain | bundle | consistency | archive
    path: str
    trusted_key: str | None = None
    chain_id: str | None = None
    checkpoints: list[str] = field(default_factory=list)
    python: dict[str, Any] = field(default_factory=dict)
    named: bool = True

    def js_input(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "trusted_key": self.trusted_key,
            "chain_id": self.chain_id,
            "checkpoints": self.checkpoints,
        }


def verdict(ok: bool, step: int | None = None, reason: str | None = None, seq: Any = None) -> dict:
    """The part of a result both verifiers must agree on."""
    if ok:
        return {"ok": True, "step": None, "reason": None, "seq": None}
    return {"ok": False, "step": step, "reason": reason, "seq": None if step == 0 else seq}


def agreed(js: dict[str, Any]) -> dict[str, Any]:
    if js["ok"]:
        return verdict(True)
    return verdict(False, js["step"], js["reason"], js["seq"])


# -- the Python verdicts ---------------------------------------------------------


def _split(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _loosen(content: Path) -> None:
    """Rewrite a data directory's packs as one file per blob (FORMAT.md 6.4).

    The "chain" cases hand both verifiers a chain.jsonl and its blobs in
    the plain layout every reader accepts, so that a case edits or deletes
    one blob as one file.
    """
    from memory_chain.chain.content.store import ContentStore

    store = ContentStore(content)
    for rec in store.records():
        if rec.live:
            h = rec.digest.hex()
            data = store.get("b3:" + h)
            assert data is not None
            (content / h[:2]).mkdir(exist_ok=True)
            (content / h[:2] / h[2:]).write_bytes(data)
    store.close()
    shutil.rmtree(content / "packs", ignore_errors=True)


def python_chain(c: Case) -> dict[str, Any]:
    from memory_chain.chain.log.checkpoint import parse_checkpoint
    from memory_chain.chain.verify.lines import ChainState, verify_lines

    root = Path(c.path)
    state = ChainState(trusted_key=c.trusted_key, pinned_chain_id=c.chain_id)
    for note in c.checkpoints:
        state.add_checkpoint(parse_checkpoint(Path(note).read_bytes()))

    from memory_chain.chain.content.store import ContentStore

    store = ContentStore(root / "content")  # the reference reader: packs, hints, loose files
    report = verify_lines(_split((root / "chain.jsonl").read_bytes()), blobs=store.raw, state=state)
    store.close()
    f = report.failure
    return verdict(True) if f is None else verdict(False, f.step, f.reason, f.seq)


def python_bundle(c: Case) -> dict[str, Any]:
    from memory_chain.chain.log.bundle import BundleError, verify_bundle

    try:
        verify_bundle(Path(c.path).read_bytes(), trusted_key=c.trusted_key, chain_id=c.chain_id)
    except BundleError as exc:
        return verdict(False, exc.step, exc.reason, exc.seq)
    return verdict(True)


def python_consistency(c: Case) -> dict[str, Any]:
    from memory_chain.chain.audit.proofs import check_consistency_file
    from memory_chain.chain.log.bundle import BundleError

    try:
        check_consistency_file(Path(c.path).read_bytes(), trusted_key=c.trusted_key)
    except BundleError as exc:
        return verdict(False, exc.step, exc.reason, exc.seq)
    return verdict(True)


def python_archive(c: Case) -> dict[str, Any]:
    from memory_chain.chain.lifecycle.archive_check import verify_archive

    report = verify_archive(c.path, trusted_key=c.trusted_key, chain_id=c.chain_id)
    f = report.failure
    return verdict(True) if f is None else verdict(False, f.step, f.reason, f.seq)


PYTHON: dict[str, Callable[[Case], dict[str, Any]]] = {
    "chain": python_chain,
    "bundle": python_bundle,
    "consistency": python_consistency,
    "archive": python_archive,
}


def run_js(cases: list[Case], folder: Path) -> list[dict[str, Any]]:
    """One node process over every case; its results, in order."""
    spec = folder / "cases.json"
    spec.write_text(json.dumps([c.js_input() for c in cases]))
    out = subprocess.run(
        ["node", str(CLI_JS), "batch", str(spec)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    results: list[dict[str, Any]] = json.loads(out.stdout)
    return results


# -- building the cases -------------------------------------------------------------


def _signer(n: int) -> Any:
    from memory_chain.chain.format.keys import Signer

    return Signer(bytes([n]) * 32)


def _signed(obj: dict[str, Any], signer: Any) -> bytes:
    from memory_chain.chain.format.canonical import canonical
    from memory_chain.chain.format.entry import signing_message

    obj = {k: v for k, v in obj.items() if k != "sig"}
    obj["sig"] = signer.sign(signing_message(obj))
    return canonical(obj)


def _lines(d: Path) -> list[bytes]:
    return (d / "chain.jsonl").read_bytes().split(b"\n")[:-1]


def _write_lines(d: Path, lines: list[bytes], tail: bytes = b"") -> None:
    (d / "chain.jsonl").write_bytes(b"".join(line + b"\n" for line in lines) + tail)


def _relink(lines: list[bytes], start: int, signer: Any, edit: Callable[[dict], None]) -> None:
    """Edit line ``start`` and re-sign it and every later line, relinked (a rewrite)."""
    from memory_chain.chain.format.canonical import b3

    for i in range(start, len(lines)):
        obj = orjson.loads(lines[i])
        if i == start:
            edit(obj)
        if i > 0:
            obj["prev"] = b3(lines[i - 1])
        lines[i] = _signed(obj, signer)


def _raw_sig(seed: bytes, message: bytes, r: int) -> str:
    """An Ed25519 signature with a chosen nonce r (r = 0: R is the identity, small order)."""
    from nacl.bindings import crypto_scalarmult_ed25519_base_noclamp

    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    public = crypto_scalarmult_ed25519_base_noclamp(a.to_bytes(32, "little"))
    big_r = (
        bytes([1]) + bytes(31)
        if r == 0
        else crypto_scalarmult_ed25519_base_noclamp(r.to_bytes(32, "little"))
    )
    k = int.from_bytes(hashlib.sha512(big_r + public + message).digest(), "little") % L_ORDER
    s = (r + k * a) % L_ORDER
    return (big_r + s.to_bytes(32, "little")).hex()


class Builder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cases: list[Case] = []
        os.environ["MEMORY_CHAIN_STATE_DIR"] = str(folder / "state")
        self.owner = _signer(0)
        self.other = _signer(7)
        self.base = self._base()

    def _base(self) -> Path:
        """A chain of 12: memories, a redaction with its blob gone, a rotation, a checkpoint."""
        from memory_chain.chain.audit.checkpointing import checkpoint
        from memory_chain.chain.format.keys import Signer
        from memory_chain.chain.lifecycle.redact import redact
        from memory_chain.chain.lifecycle.rotate import rotate
        from memory_chain.chain.store.ledger import Ledger, NewEntry

        d = self.folder / "base"
        led = Ledger.init(d, name="agreement-agent", signer=self.owner, clock=lambda: CLOCK)
        led.add(NewEntry(content=b"The user prefers tabs.\n", type="preference"))
        led.add(NewEntry(content=b"Deploys go out on Tuesdays.", type="fact", meta={"env": "prod"}))
        led.add(
            NewEntry(content="Café au lait, not tea ✓".encode(), type="identity", tier="committed")
        )
        led.add(NewEntry(content=b"A wrong port: 5433", type="fact"))
        redact(led, 4, "wrong port")
        led.add(NewEntry(content=b"Use pnpm, not npm", type="decision", tier="committed"))
        led.add(NewEntry(content=b"Ship on Friday", type="commitment", tier="ephemeral"))
        checkpoint(led)  # size 8
        with mock.patch.object(Signer, "generate", return_value=_signer(1)):
            rotate(led)
        self.rotated = _signer(1)
        led.add(NewEntry(content=b"After the rotation", type="lesson", source="curation"))
        led.add(NewEntry(content=b"Another after", type="episode", source="auto"))
        led.add(NewEntry(content=b"The last memory", type="memory", meta={"session": "s1"}))
        checkpoint(led)  # size 12
        self.ledger = led
        return d

    # -- helpers

    def add(self, case: Case) -> None:
        case.python = PYTHON[case.kind](case)
        self.cases.append(case)

    def chain_copy(self, name: str, *, packs: bool = False) -> Path:
        """A copy of the base chain; its blobs one file each, or (``packs``) in its packs."""
        d = self.folder / "chains" / name
        shutil.copytree(self.base, d, ignore=shutil.ignore_patterns("lock", "*.key", "*.enc"))
        if not packs:
            _loosen(d / "content")
        return d

    def packed(self, name: str, edit: Callable[[Path], None]) -> None:
        """A case over the base chain's content packs as written (FORMAT.md 6.1, 6.2)."""
        d = self.chain_copy(name, packs=True)
        edit(d)
        self.add(Case(name, "chain", str(d), checkpoints=self.notes(d)))

    def notes(self, d: Path) -> list[str]:
        return [str(p) for p in sorted((d / "checkpoints").glob("*.note"))]

    def chain(self, name: str, edit: Callable[[Path], None], **pins: Any) -> None:
        d = self.chain_copy(name)
        edit(d)
        self.add(Case(name, "chain", str(d), checkpoints=self.notes(d), **pins))

    def file(self, name: str, data: bytes, suffix: str) -> Path:
        p = self.folder / "files" / (name.replace(" ", "-").replace("/", "-") + suffix)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    # -- the named cases

    def chains(self) -> None:
        gid = orjson.loads(_lines(self.base)[0])
        cid = _hash(_lines(self.base)[0])
        owner, rotated = self.owner, self.rotated
        self.add(Case("golden vector chain (tests/vectors/golden)", "chain", str(GOLDEN)))
        self.chain("valid chain", lambda d: None)
        self.chain("valid, genesis key pinned", lambda d: None, trusted_key=gid["key"])
        self.chain("valid, rotated-to key pinned", lambda d: None, trusted_key=rotated.key_id)
        self.chain("valid, chain id pinned", lambda d: None, chain_id=cid)
        self.chain("wrong chain id pinned", lambda d: None, chain_id="b3:" + "0" * 64)
        self.chain("untrusted key pinned", lambda d: None, trusted_key=self.other.key_id)

        def edit_line(seq: int, old: bytes, new: bytes) -> Callable[[Path], None]:
            def go(d: Path) -> None:
                lines = _lines(d)
                assert old in lines[seq]
                lines[seq] = lines[seq].replace(old, new, 1)
                _write_lines(d, lines)

            return go

        def lines_edit(f: Callable[[list[bytes]], list[bytes]], tail: bytes = b"") -> Callable:
            return lambda d: _write_lines(d, f(_lines(d)), tail)

        def blob(d: Path, seq: int) -> Path:
            h = orjson.loads(_lines(d)[seq])["content"]
            return d / "content" / h[3:5] / h[5:]

        self.chain("edited byte in a line", edit_line(2, b'"env":"prod"', b'"env":"prox"'))
        self.chain("edited tier", edit_line(1, b'"relationship"', b'"ephemeral"'))
        self.chain(
            "edited content", lambda d: blob(d, 2).write_bytes(b"Deploys go out on Mondays.")
        )
        self.chain("deleted blob, never redacted", lambda d: blob(d, 1).unlink())
        self.chain("deleted line", lines_edit(lambda ls: ls[:5] + ls[6:]))
        self.chain("swapped lines", lines_edit(lambda ls: [*ls[:5], ls[6], ls[5], *ls[7:]]))
        self.chain("duplicated line", lines_edit(lambda ls: [*ls[:6], ls[5], *ls[6:]]))
        self.chain(
            "forged signature",
            lines_edit(lambda ls: [*ls[:3], _flip_sig(ls[3]), *ls[4:]]),
        )
        self.chain("truncated below a checkpoint", lines_edit(lambda ls: ls[:10]))
        self.chain("torn tail (a warning, not a failure)", lines_edit(lambda ls: ls, b'{"v":1'))
        self.chain("unterminated line then more", lambda d: _unterminated(d))
        self.chain("empty chain", lines_edit(lambda ls: []))
        self.chain("non-canonical line (a space)", edit_line(1, b'"meta":{}', b'"meta": {}'))
        self.chain("CRLF line end", edit_line(1, b'"v":1}', b'"v":1}\r'))
        self.chain("float in meta", edit_line(2, b'"env":"prod"', b'"env":1.0'))
        self.chain("lone surrogate escape", edit_line(2, b'"env":"prod"', b'"env":"\\ud800"'))
        self.chain("byte order mark", lines_edit(lambda ls: [b"\xef\xbb\xbf" + ls[0], *ls[1:]]))
        self.chain("invalid UTF-8", edit_line(2, b'"env":"prod"', b'"env":"pr\xc3"'))
        self.chain("needless escape", edit_line(2, b'"prod"', b'"pro\\u0064"'))
        self.chain(
            "nested deeper than the parser allows",
            edit_line(2, b'"env":"prod"', b'"env":' + b"[" * 1100 + b"]" * 1100),
        )
        self.chain(
            "line over 8191 bytes", edit_line(2, b'"env":"prod"', b'"env":"' + b"x" * 8200 + b'"')
        )
        self.chain("seq gap", lambda d: _resigned(d, 5, owner, lambda o: o.update(seq=6)))
        self.chain(
            "time backwards",
            lambda d: _resigned(d, 6, owner, lambda o: o.update(ts="2025-01-01T00:00:00.000000Z")),
        )
        self.chain(
            "impossible date",
            lambda d: _resigned(d, 6, owner, lambda o: o.update(ts="2026-02-29T00:00:00.000000Z")),
        )
        self.chain(
            "signed by an unknown key",
            lambda d: _resigned(d, 6, self.other, lambda o: o.update(key=self.other.key_id)),
        )
        self.chain(
            "redaction of a committed entry",
            lambda d: _appended(
                d, rotated, {"type": "redaction", "meta": {"target": 3, "reason": "no"}}, target=3
            ),
        )
        self.chain(
            "redaction naming other content",
            lambda d: _appended(
                d,
                rotated,
                {"type": "redaction", "meta": {"target": 2, "reason": "no", "content": cid}},
            ),
        )
        self.chain("forged rotation (new_sig)", lambda d: _forged_rotation(d))
        self.chain("substituted key, unpinned (verifies)", lambda d: _substituted(d, self.other))
        self.chain(
            "substituted key, genesis key pinned",
            lambda d: _substituted(d, self.other),
            trusted_key=gid["key"],
        )
        self.chain(
            "substituted key, chain id pinned", lambda d: _substituted(d, self.other), chain_id=cid
        )
        self.chain("rewritten below a checkpoint", lambda d: _rewritten(d, owner, rotated))
        self.chain(
            "small-order R (libsodium rejects, cofactored verify accepts)",
            lambda d: _small_r(d, bytes(32)),
        )
        self.chain("non-canonical S (S + L)", lambda d: _s_plus_l(d))
        self.chain("checkpoint of another chain", _foreign_checkpoint)

    def bundles(self) -> None:
        from memory_chain.chain.audit.proofs import prove_entry

        key, cid = self.owner.key_id, _hash(_lines(self.base)[0])
        good = prove_entry(self.ledger, 10, with_content=True)
        early = prove_entry(self.ledger, 2, with_content=True)
        obj = orjson.loads(good)

        def case(name: str, data: bytes, **pins: Any) -> None:
            pins = pins or {"trusted_key": key}
            self.add(Case(name, "bundle", str(self.file("bundle " + name, data, ".json")), **pins))

        def changed(edit: Callable[[dict], None]) -> bytes:
            o = orjson.loads(good)
            edit(o)
            return orjson.dumps(o, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"

        case("valid bundle, key pinned", good)
        case("valid bundle, rotated-to key pinned", good, trusted_key=self.rotated.key_id)
        case("valid bundle, chain id pinned", good, chain_id=cid)
        case("valid bundle of an entry before the rotation", early)
        case("unpinned", good, trusted_key=None, chain_id=None)
        case("not a bundle", b'{"format": "something-else"}')
        case("not JSON", b"\x00\x01")
        case("wrong chain id pinned", good, chain_id="b3:" + "1" * 64)
        case("untrusted key pinned", good, trusted_key=self.other.key_id)
        case("changed content", changed(lambda o: o.update(content="QW5vdGhlciBtZW1vcnk=")))
        case(
            "content not canonical base64",
            changed(lambda o: o.update(content=o["content"][:-2] + "x=")),
        )
        case("bad proof step", changed(lambda o: o["entry"]["inclusion"].__setitem__(0, "00" * 32)))
        case(
            "proof hash with a space",
            changed(lambda o: o["entry"]["inclusion"].__setitem__(0, "0 " + "0" * 62)),
        )
        case("proof one hash short", changed(lambda o: o["entry"]["inclusion"].pop()))
        case("omitted rotation", changed(lambda o: o.update(rotations=[])))
        case(
            "edited entry line",
            changed(
                lambda o: o["entry"].update(line=o["entry"]["line"].replace('"auto"', '"manual"'))
            ),
        )
        case(
            "entry line not canonical",
            changed(lambda o: o["entry"].update(line=o["entry"]["line"].replace(":", ": ", 1))),
        )
        case(
            "forged checkpoint signature",
            changed(lambda o: o.update(checkpoint=_flip_note(o["checkpoint"]))),
        )
        case("checkpoint that does not parse", changed(lambda o: o.update(checkpoint="nothing\n")))
        case("genesis swapped for the entry", changed(lambda o: o.update(genesis=obj["entry"])))
        case(
            "genesis proof at the wrong place",
            changed(lambda o: o["genesis"].update(inclusion=obj["entry"]["inclusion"])),
        )
        case("entry beyond the checkpoint", changed(lambda o: o.update(entry=_beyond(o["entry"]))))
        case("anchors not a list", changed(lambda o: o.update(anchors={})))
        case("rotations not a list", changed(lambda o: o.update(rotations="none")))
        case(
            "lone surrogate in the file", good.replace(b'"anchors": []', b'"anchors": ["\\udc00"]')
        )

    def consistency(self) -> None:
        from memory_chain.chain.audit.proofs import Consistency
        from memory_chain.chain.log.checkpoint import parse_checkpoint
        from memory_chain.chain.log.merkle import BLAKE3, consistency_proof

        d = self.base
        leaves = [BLAKE3.leaf(line) for line in _lines(d)]
        notes = sorted((d / "checkpoints").glob("*.note"))
        old = parse_checkpoint(notes[0].read_bytes())
        # Both checkpoints by the genesis key: a size-4 and a size-8 one.
        from memory_chain.chain.log.checkpoint import make_checkpoint
        from memory_chain.chain.log.merkle import root_of

        cid = _hash(_lines(d)[0])
        small = make_checkpoint(cid, 4, root_of(BLAKE3, leaves[:4]), self.owner)
        good = Consistency(small, old, consistency_proof(BLAKE3, leaves, 4, 8)).to_json()
        key = self.owner.key_id

        def case(name: str, data: bytes, trusted_key: str | None = key) -> None:
            path = str(self.file("consistency " + name, data, ".json"))
            self.add(Case(name, "consistency", path, trusted_key=trusted_key))

        o = orjson.loads(good)

        def changed(**kw: Any) -> bytes:
            return orjson.dumps({**o, **kw}, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)

        case("valid consistency proof", good)
        case("consistency: no key", good, trusted_key=None)
        case("consistency: another key", good, trusted_key=self.other.key_id)
        case("consistency: bad proof step", changed(proof=["00" * 32, *o["proof"][1:]]))
        case("consistency: sizes swapped", changed(old=o["new"], new=o["old"], proof=[]))
        case("consistency: not one", b'{"format": "memory-chain-consistency/1"}')

    def archives(self) -> None:
        from memory_chain.chain.lifecycle.archive_export import export_archive

        key = self.owner.key_id
        whole = self.folder / "files" / "whole.tar"
        whole.parent.mkdir(parents=True, exist_ok=True)
        export_archive(self.ledger, whole)
        gz = self.folder / "files" / "whole.tar.gz"
        export_archive(self.ledger, gz)
        part = self.folder / "files" / "part.tar"
        export_archive(self.ledger, part, from_seq=3, to_seq=9)
        data, pdata = whole.read_bytes(), part.read_bytes()

        def case(name: str, path: Path, **pins: Any) -> None:
            self.add(Case(name, "archive", str(path), **(pins or {"trusted_key": key})))

        def raw(name: str, blob: bytes, **pins: Any) -> None:
            case(name, self.file("archive " + name, blob, ".tar"), **pins)

        case("whole export", whole)
        case("whole export, gzip", gz)
        case("partial export (seq 3..9)", part)
        case("whole export, wrong chain id", whole, chain_id="b3:" + "2" * 64)
        case("partial export, untrusted key", part, trusted_key=self.other.key_id)
        raw("archive: edited line", _tar_edit(data, b'"env":"prod"', b'"env":"prox"'))
        raw(
            "archive: manifest's entries edited",
            _tar_edit(data, b'"entries": 12', b'"entries": 13'),
        )
        raw(
            "archive: manifest's chain_size edited (informational, not checked)",
            _tar_edit(data, b'"chain_size": 12', b'"chain_size": 13'),
        )
        raw("archive: cut short", data[:3000])
        raw("archive: not a tar", b"hello, world\n" * 100)
        raw("archive: empty", b"")
        raw("archive: damaged gzip", gz.read_bytes()[:200])
        # Issue 22: each of these verified ok before revision 6 (16.1).
        zipped = gz.read_bytes()
        raw("gzip: CRC-32 changed", _flip(zipped, len(zipped) - 8))
        raw("gzip: length (ISIZE) changed", _flip(zipped, len(zipped) - 4))
        raw("gzip: trailer missing", zipped[:-8])
        raw("gzip: bytes after the trailer", zipped + b"trailing garbage")
        raw("gzip: a second member after the first", zipped + zipped)
        second = _header_offsets(data)[1]
        raw("tar: damaged header after the first member", _flip(data, second + 148))
        raw("tar: a non-zero byte after the end-of-archive block", _flip(data, len(data) - 5))
        raw("tar: cut after chain.jsonl's data, no end block", data[: _data_end(data)])
        raw(
            "partial: proof.json edited (no longer its manifest hash)",
            _tar_edit(pdata, b'"checkpoint_size": 12', b'"checkpoint_size": 11'),
        )
        raw("archive: unsafe member name", _tar_rename(data, b"keys", b"../k"))
        raw("archive: unexpected member name", _tar_rename(data, b"keys", b"kezs"))
        raw(
            "archive: edited blob",
            _tar_edit(data, b"Deploys go out on Tuesdays.", b"Deploys go out on Mondays!."),
        )

    def packs(self) -> None:
        """Issue 22: the content packs, byte by byte, as the second verifier reads them."""
        from memory_chain.chain.content.store import HEAD, PACK_MAGIC, ContentStore

        store = ContentStore(self.base / "content")
        records = [r for r in store.records() if r.live]
        store.close()
        # The record of "Deploys go out on Tuesdays." (seq 2), and where its fields are.
        rec = next(r for r in records if r.size == len(b"Deploys go out on Tuesdays."))
        pack = "content/packs/00000000.pack"

        def edit_pack(change: Callable[[bytearray], None]) -> Callable[[Path], None]:
            def run(d: Path) -> None:
                data = bytearray((d / pack).read_bytes())
                change(data)
                (d / pack).write_bytes(bytes(data))

            return run

        def flip(at: int) -> Callable[[bytearray], None]:
            def run(data: bytearray) -> None:
                data[at] ^= 0x01

            return run

        def erase(data: bytearray) -> None:
            data[rec.offset] = ord("E")
            data[rec.offset + HEAD : rec.offset + HEAD + rec.size] = bytes(rec.size)

        def sound_copy_after(data: bytearray) -> None:
            good = bytes(data[rec.offset : rec.offset + HEAD + rec.size + 4])
            data[rec.offset + HEAD] ^= 0x20  # the first copy altered
            data += good  # a sound copy at the end

        def junk(data: bytearray) -> None:
            data += b"L" + b"\x00" * 20  # a record a crash cut short

        def move_to_second_pack(d: Path) -> None:
            data = bytearray((d / pack).read_bytes())
            body = bytes(data[rec.offset : rec.offset + HEAD + rec.size + 4])
            data[rec.offset : rec.offset + HEAD + rec.size + 4] = b"\x00" * len(body)
            (d / pack).write_bytes(bytes(data))
            (d / "content/packs/00000001.pack").write_bytes(PACK_MAGIC + body)

        def lying_hint(d: Path) -> None:
            shard = d / "content/packs/index" / f"{rec.digest[0]:02x}"
            data = bytearray(shard.read_bytes())
            at = data.find(rec.digest)
            data[at + 36 : at + 44] = (8).to_bytes(8, "big")  # points at the first record
            shard.write_bytes(bytes(data))

        self.packed("packs: as written", lambda d: None)
        self.packed(
            "packs: hints deleted", lambda d: shutil.rmtree(d / "content" / "packs" / "index")
        )
        self.packed("packs: a hint points at another record", lying_hint)
        self.packed("packs: a byte of a record altered", edit_pack(flip(rec.offset + HEAD + 3)))
        self.packed("packs: a record's digest altered", edit_pack(flip(rec.offset + 5)))
        self.packed("packs: a record's length altered", edit_pack(flip(rec.offset + 36)))
        self.packed(
            "packs: a record's trailing length altered",
            edit_pack(flip(rec.offset + HEAD + rec.size + 3)),
        )
        self.packed("packs: a record erased with no redaction", edit_pack(erase))
        self.packed("packs: the magic damaged", edit_pack(flip(3)))
        self.packed("packs: the pack file deleted", lambda d: (d / pack).unlink())
        self.packed("packs: an altered copy before a sound one", edit_pack(sound_copy_after))
        self.packed("packs: a torn record after the last one", edit_pack(junk))
        self.packed("packs: a record moved to a second pack", move_to_second_pack)

    def mutations(self) -> None:
        """Seeded random byte changes of a chain, a bundle and an archive."""
        from memory_chain.chain.audit.proofs import prove_entry

        rng = random.Random(20261125)
        chain = (self.base / "chain.jsonl").read_bytes()
        for i in range(MUTATIONS["chain"]):
            d = self.chain_copy(f"mut-{i}")
            (d / "chain.jsonl").write_bytes(_mutate(chain, rng))
            case = Case(f"chain mutation {i}", "chain", str(d), checkpoints=self.notes(d))
            case.named = False
            self.add(case)
        bundle = prove_entry(self.ledger, 10, with_content=True)
        for i in range(MUTATIONS["bundle"]):
            p = self.file(f"mut-bundle-{i}", _mutate(bundle, rng), ".json")
            case = Case(f"bundle mutation {i}", "bundle", str(p), trusted_key=self.owner.key_id)
            case.named = False
            self.add(case)
        data = (self.folder / "files" / "whole.tar").read_bytes()
        end = data.rindex(b'"v":1}\n') + 7  # mutate the members, not the zero padding
        for i in range(MUTATIONS["archive"]):
            p = self.file(f"mut-archive-{i}", _mutate(data[:end], rng) + data[end:], ".tar")
            case = Case(f"archive mutation {i}", "archive", str(p), trusted_key=self.owner.key_id)
            case.named = False
            self.add(case)


def _hash(line: bytes) -> str:
    from memory_chain.chain.format.canonical import b3

    return b3(line)


def _mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    i = rng.randrange(len(b))
    choice = rng.random()
    if choice < 0.6:
        b[i] = (
            rng.choice(b'0123456789abcdef"{}:,\\ \n') if rng.random() < 0.5 else rng.randrange(256)
        )
    elif choice < 0.8:
        del b[i]
    else:
        b.insert(i, rng.randrange(256))
    return bytes(b)


def _flip_sig(line: bytes) -> bytes:
    at = line.index(b'"sig":"') + 7
    c = b"1" if line[at : at + 1] != b"1" else b"2"
    return line[:at] + c + line[at + 1 :]


def _flip_note(note: str) -> str:
    head, sep, last = note.rpartition(" ")
    body = last.rstrip("\n")
    c = "A" if body[10] != "A" else "B"
    return head + sep + body[:10] + c + body[11:] + "\n"


def _beyond(entry: dict[str, Any]) -> dict[str, Any]:
    o = orjson.loads(entry["line"])
    o["seq"] = 40
    return {"line": orjson.dumps(o, option=orjson.OPT_SORT_KEYS).decode(), "inclusion": []}


def _unterminated(d: Path) -> None:
    data = (d / "chain.jsonl").read_bytes()
    lines = data.split(b"\n")
    # Join lines 3 and 4: line 3 loses its "\n" and line 4 follows it.
    (d / "chain.jsonl").write_bytes(
        b"\n".join(lines[:3]) + b"\n" + lines[3] + b"\n".join(lines[4:])
    )


def _resigned(d: Path, seq: int, signer: Any, edit: Callable[[dict], None]) -> None:
    lines = _lines(d)
    obj = orjson.loads(lines[seq])
    edit(obj)
    lines[seq] = _signed(obj, signer)
    _write_lines(d, lines)


def _appended(d: Path, signer: Any, fields: dict[str, Any], target: int | None = None) -> None:
    lines = _lines(d)
    last = orjson.loads(lines[-1])
    meta = dict(fields["meta"])
    if target is not None:
        meta["content"] = orjson.loads(lines[target])["content"]
    obj = {
        **last,
        "seq": len(lines),
        "prev": _hash(lines[-1]),
        "type": fields["type"],
        "tier": "committed",
        "content": None,
        "size": 0,
        "importance": 50,
        "meta": meta,
    }
    lines.append(_signed(obj, signer))
    _rewrite(d, lines)


def _rewrite(d: Path, lines: list[bytes], *, relink_from: int | None = None) -> None:
    """Write ``lines`` (re-signed and relinked from ``relink_from`` on, each by the key in
    force there) and drop the stored checkpoints, which no longer fit."""
    if relink_from is not None:
        _relink(lines, relink_from, _signer(0), lambda o: None)
        _relink(lines, 9, _signer(1), lambda o: None)  # after the rotation at 8
    _write_lines(d, lines)
    for note in (d / "checkpoints").glob("*.note"):
        note.unlink()


def _forged_rotation(d: Path) -> None:
    lines = _lines(d)
    obj = orjson.loads(lines[8])
    assert obj["type"] == "key-rotation"
    sig = obj["meta"]["new_sig"]
    obj["meta"]["new_sig"] = ("0" if sig[0] != "0" else "1") + sig[1:]
    _relink(lines, 8, _signer(0), lambda o: o.update(meta=obj["meta"]))
    _rewrite(d, lines, relink_from=9)


def _substituted(d: Path, signer: Any) -> None:
    """The whole chain re-signed by another key (its rotation kept, to the rotated key)."""
    from memory_chain.chain.format.entry import rotation_message

    lines = _lines(d)
    for i in range(len(lines)):
        obj = orjson.loads(lines[i])
        if i > 0:
            obj["prev"] = _hash(lines[i - 1])
        if i <= 8:
            obj["key"] = signer.key_id
        if obj["type"] == "key-rotation":
            del obj["meta"]["new_sig"]
            obj["meta"]["new_sig"] = _signer(1).sign(rotation_message(obj))
        key = signer if i <= 8 else _signer(1)
        lines[i] = _signed(obj, key)
    _rewrite(d, lines)


def _rewritten(d: Path, owner: Any, rotated: Any) -> None:
    lines = _lines(d)
    _relink(lines, 2, owner, lambda o: o["meta"].update(env="staging"))
    _relink(lines, 9, rotated, lambda o: None)
    _write_lines(d, lines)


def _small_r(d: Path, seed: bytes) -> None:
    from memory_chain.chain.format.entry import signing_message

    lines = _lines(d)
    obj = orjson.loads(lines[1])
    del obj["sig"]
    obj["sig"] = _raw_sig(seed, signing_message(obj), 0)
    from memory_chain.chain.format.canonical import canonical

    lines[1] = canonical(obj)
    _rewrite(d, lines, relink_from=2)


def _s_plus_l(d: Path) -> None:
    lines = _lines(d)
    obj = orjson.loads(lines[1])
    sig = bytes.fromhex(obj["sig"])
    s = int.from_bytes(sig[32:], "little") + L_ORDER
    if s >= 2**256:
        return
    obj["sig"] = (sig[:32] + s.to_bytes(32, "little")).hex()
    from memory_chain.chain.format.canonical import canonical

    lines[1] = canonical(obj)
    _rewrite(d, lines, relink_from=2)


def _foreign_checkpoint(d: Path) -> None:
    """A checkpoint for this chain's first 8 lines, named for another origin, by the right key."""
    from memory_chain.chain.log.checkpoint import make_checkpoint
    from memory_chain.chain.log.merkle import BLAKE3, root_of

    leaves = [BLAKE3.leaf(line) for line in _lines(d)]
    cp = make_checkpoint("b3:" + "3" * 64, 8, root_of(BLAKE3, leaves[:8]), _signer(0))
    for note in (d / "checkpoints").glob("*.note"):
        note.unlink()
    (d / "checkpoints" / "00000000000000000008.note").write_bytes(cp.text)


def _flip(data: bytes, at: int) -> bytes:
    """``data`` with the low bit of byte ``at`` flipped."""
    b = bytearray(data)
    b[at] ^= 0x01
    return bytes(b)


def _header_offsets(data: bytes) -> list[int]:
    """Where each member's header starts in a tar file (read by the standard library)."""
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        return [m.offset for m in tf.getmembers()]


def _data_end(data: bytes) -> int:
    """Where the last member's data (padded to a block) ends: the end-of-archive block."""
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        last = tf.getmembers()[-1]
    return last.offset_data + -(-last.size // 512) * 512


def _tar_edit(data: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and old in data, old
    return data.replace(old, new, 1)


def _tar_rename(data: bytes, old: bytes, new: bytes) -> bytes:
    """Rename the member whose name is ``old`` and fix its header checksum."""
    for at in range(0, len(data), 512):
        header = bytearray(data[at : at + 512])
        if header[:100].rstrip(b"\0") == old:
            header[: len(new)] = new
            header[len(new) : 100] = bytes(100 - len(new))
            header[148:156] = b" " * 8
            header[148:156] = b"%06o\0 " % sum(header)
            return data[:at] + bytes(header) + data[at + 512 :]
    raise AssertionError(old)


def build(folder: Path) -> list[Case]:
    b = Builder(folder)
    b.chains()
    b.bundles()
    b.consistency()
    b.archives()
    b.packs()
    b.mutations()
    return b.cases


def _show(v: dict[str, Any]) -> str:
    if v["ok"]:
        return "ok"
    at = "" if v["seq"] is None else f" at {v['seq']}"
    return f"{v['reason']} (step {v['step']}{at})"


def table(cases: list[Case], js: list[dict[str, Any]]) -> str:
    """specs/VERIFIER-AGREEMENT.md."""
    rows = []
    for c, j in zip(cases, js, strict=True):
        if c.named:
            same = "yes" if agreed(j) == c.python else "**NO**"
            rows.append(
                f"| {c.kind} | {c.name} | {_show(c.python)} | {_show(agreed(j))} | {same} |"
            )
    counts = []
    for kind, n in MUTATIONS.items():
        pairs = [(c, j) for c, j in zip(cases, js, strict=True) if not c.named and c.kind == kind]
        agree = sum(agreed(j) == c.python for c, j in pairs)
        ok = sum(c.python["ok"] for c, _ in pairs)
        counts.append(f"| {kind} | {n} | {agree} | {ok} |")
    return (
        "# Python and JavaScript verifiers: the agreement table\n\n"
        "Generated by `python tests/js_agreement.py --write`; checked by\n"
        "tests/test_js_agreement.py, which runs the reference verifier (Python,\n"
        "`chain/`) and the independent one (JavaScript, `auditor/verifier-js/`,\n"
        "written from specs/FORMAT.md) over the same files and requires the same\n"
        "verdict, step, reason code and seq (the seq is not compared for the\n"
        "container failures of step 0). Chains are verified as lines with their\n"
        "blobs and checkpoints (FORMAT.md 5.1); bundles as 14.2; consistency\n"
        "files as 15; export archives as 16.5. The keys are TEST ONLY seeds.\n\n"
        "| kind | case | Python | JavaScript | agree |\n|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\nSeeded random byte changes (a byte replaced, deleted or inserted) of the\n"
        "valid chain, of a valid bundle and of a valid export:\n\n"
        "| kind | mutations | agree | still valid |\n|---|---|---|---|\n" + "\n".join(counts) + "\n"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = build(Path(tmp))
        js = run_js(cases, Path(tmp))
        text = table(cases, js)
    if "--write" in sys.argv:
        TABLE.write_text(text)
        print(f"wrote {TABLE}")
    else:
        print(text)


if __name__ == "__main__":
    main()
