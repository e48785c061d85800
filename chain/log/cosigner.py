"""A witness's side of c2sp.org/tlog-witness: add-checkpoint's request and its rules.

A request body is ``old <size>\\n``, up to 63 base64 consistency-proof lines, an empty
line, then the checkpoint note. The witness knows each log by its origin and key; it
keeps, per origin, the largest checkpoint it cosigned (a small JSON state file), and
cosigns a checkpoint only if the request's old size is that size and the proof shows
the new tree extends it. Its answers are HTTP statuses (the HTTP server is
integrations/witness_http.py; `witness cosign` uses the same rules over a folder):

    404  the origin is not a log this witness follows
    403  no signature by the log's key verifies
    400  a malformed request, or an old size above the checkpoint's
    409  the old size is not the witness's (body: its size, text/x.tlog.size), or the
         same size with another root
    422  the consistency proof does not verify
    200  one cosignature line

The check of the old size and the update of the state are one step under an flock, as
the spec requires (two requests must not roll the witness's view back).
"""

from __future__ import annotations

import base64
import contextlib
import time
from collections.abc import Sequence
from pathlib import Path

import orjson

from ..format.canonical import strict_base64
from ..format.errors import OperationalError
from ..format.fsutil import flocked, replace_file
from .checkpoint import Checkpoint, CheckpointError, parse_checkpoint
from .cosignature import COSIGNATURE, VerifierKey, cosign, cosigned_at, note_signed_by
from .merkle import SHA256, ProofError, verify_consistency

__all__ = [
    "SIZE_TYPE",
    "Cosigner",
    "Refused",
    "Request",
    "add_checkpoint_body",
    "parse_add_checkpoint",
]

SIZE_TYPE = "text/x.tlog.size"
STATE_FORMAT = "memory-chain-cosigner/1"
MAX_PROOF = 63


class Refused(Exception):
    """The witness does not cosign: an HTTP status, why, and the body to answer with."""

    def __init__(self, status: int, reason: str, message: str, body: bytes = b"") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or (message + "\n").encode()


class Request:
    """A parsed add-checkpoint request."""

    __slots__ = ("checkpoint", "old", "proof")

    def __init__(self, old: int, proof: list[bytes], checkpoint: Checkpoint) -> None:
        self.old = old
        self.proof = proof
        self.checkpoint = checkpoint


def add_checkpoint_body(old: int, proof: Sequence[bytes], note: bytes) -> bytes:
    """An add-checkpoint request body for the checkpoint ``note``."""
    lines = [f"old {old}\n".encode()]
    lines += [base64.b64encode(h) + b"\n" for h in proof]
    return b"".join(lines) + b"\n" + note


def parse_add_checkpoint(body: bytes) -> Request:
    """Parse a request body strictly; Refused(400) says what is wrong with it."""

    def bad(message: str) -> Refused:
        return Refused(400, "bad-request", message)

    head, sep, note = body.partition(b"\n\n")
    if not sep:
        raise bad("no empty line before the checkpoint")
    lines = head.split(b"\n")
    first = lines[0].decode("ascii", "replace")
    size_text = first.removeprefix("old ")
    if not first.startswith("old ") or not size_text.isdigit() or size_text != str(int(size_text)):
        raise bad("the first line is not `old <size>`")
    if len(lines) - 1 > MAX_PROOF:
        raise bad(f"more than {MAX_PROOF} consistency proof lines")
    proof = []
    for line in lines[1:]:
        raw = strict_base64(line.decode("ascii", "replace"))
        if raw is None or len(raw) != 32:
            raise bad("a consistency proof line is not base64 of 32 bytes")
        proof.append(raw)
    try:
        cp = parse_checkpoint(note)
    except CheckpointError as exc:
        raise bad(f"the checkpoint does not parse: {exc}") from None
    old = int(size_text)
    if old > cp.size:
        raise bad(f"old size {old} is above the checkpoint's {cp.size}")
    if old == 0 and proof:
        raise bad("a proof from size 0")
    return Request(old, proof, cp)


class Cosigner:
    """A witness: its name and key, the logs it follows (origin -> key), and its state."""

    def __init__(self, name: str, seed: bytes, logs: Sequence[VerifierKey], state: Path) -> None:
        from nacl.signing import SigningKey

        self.name = name
        self._seed = seed
        self.key = VerifierKey(name, COSIGNATURE, bytes(SigningKey(seed).verify_key))
        self.logs = {log.name: log for log in logs}
        self.state = state

    def seen(self, origin: str) -> tuple[int, bytes | None]:
        """(size, root) of the largest checkpoint of ``origin`` cosigned; (0, None) if none."""
        return self._load().get(origin, (0, None))

    def add(self, request: Request, now: int | None = None) -> str:
        """Cosign ``request``'s checkpoint by the rules above: the cosignature line."""
        cp = request.checkpoint
        log = self.logs.get(cp.origin)
        if log is None:
            raise Refused(404, "unknown-log", f"{cp.origin} is not a log this witness follows")
        if not note_signed_by(cp, log):
            raise Refused(
                403, "checkpoint-signature", f"the checkpoint is not signed by {cp.origin}'s key"
            )
        with self._locked():
            logs = self._load()
            size, root = logs.get(cp.origin, (0, None))
            if request.old != size:
                raise Refused(
                    409,
                    "old-size",
                    f"this witness cosigned {cp.origin} at size {size}, not {request.old}",
                    f"{size}\n".encode(),
                )
            if size and root is not None:
                if cp.size == size and cp.root != root:
                    raise Refused(409, "fork", f"{cp.origin} at size {size} has another root")
                try:
                    verify_consistency(SHA256, size, cp.size, request.proof, root, cp.root)
                except ProofError as exc:
                    raise Refused(
                        422, "fork", f"{cp.origin} at size {cp.size} does not extend {size}: {exc}"
                    ) from None
            if cosigned_at(cp, self.key) is None:
                line = cosign(cp, self.name, self._seed, int(time.time()) if now is None else now)
            else:  # the note carries this witness's cosignature already: the same one again
                line = next(
                    f"\u2014 {n} {base64.b64encode(k + s).decode()}\n"
                    for n, k, s in cp.signatures
                    if n == self.name and k == self.key.key_hash
                )
            logs[cp.origin] = (cp.size, cp.root)
            self._save(logs)
            return line

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        self.state.parent.mkdir(parents=True, exist_ok=True)
        return flocked(Path(f"{self.state}.lock"))

    def _load(self) -> dict[str, tuple[int, bytes | None]]:
        path = self.state
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as exc:
            raise OperationalError(f"cannot read the witness state {path}: {exc}") from None
        logs = data.get("logs") if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
            raise OperationalError(f"{path} is not a witness state ({STATE_FORMAT})")
        if not isinstance(logs, dict):
            raise OperationalError(f"{path} has no logs")
        out: dict[str, tuple[int, bytes | None]] = {}
        for origin, seen in logs.items():
            size = seen.get("size") if isinstance(seen, dict) else None
            root = seen.get("root") if isinstance(seen, dict) else None
            raw = strict_base64(root) if isinstance(root, str) else None
            if type(size) is not int or size < 1 or raw is None or len(raw) != 32:
                raise OperationalError(f"{path}: the state of {origin} is not a size and a root")
            out[origin] = (size, raw)
        return out

    def _save(self, logs: dict[str, tuple[int, bytes | None]]) -> None:
        body = {
            origin: {"size": size, "root": base64.b64encode(root).decode()}
            for origin, (size, root) in logs.items()
            if root is not None
        }
        data = orjson.dumps({"format": STATE_FORMAT, "logs": body}, option=orjson.OPT_SORT_KEYS)
        replace_file(self.state, data + b"\n", mode=0o600)
