"""Fake secrets in their providers' documented shapes, for the secret corpora.

The corpora (tests/corpora/secrets-*.tsv) hold templates, not secrets:
``{slot}`` or ``{slot:arg}`` is filled here from a seeded generator, so no
credential (real or realistic enough to trip a host's push protection) is
in the repository and every run sees the same strings. ``fill(template,
rng)`` returns the text; ``SLOTS`` names what a template may use.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import uuid
from collections.abc import Callable
from pathlib import Path

UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
ALNUM = string.ascii_letters + DIG
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """n characters of ``alphabet`` with at least one upper, lower and digit (a key's look)."""
    while True:
        s = _r(rng, alphabet, n)
        classes = (str.isupper, str.islower, str.isdigit)
        if all(any(test(c) for c in s) for test in classes):
            return s


def _b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


_WORDS = (
    "river",
    "falcon",
    "copper",
    "maple",
    "orbit",
    "lantern",
    "pepper",
    "harbor",
    "violet",
    "tiger",
    "meadow",
    "cobalt",
    "summit",
    "ember",
    "willow",
    "quartz",
    "raven",
    "delta",
)


def _password(rng: random.Random) -> str:
    """A password as people make them: a word, digits, a symbol, some capitals."""
    word = rng.choice(_WORDS)
    shape = rng.randrange(5)
    if shape == 0:
        return word.capitalize() + _r(rng, DIG, rng.randint(2, 4)) + rng.choice("!#$%&*?@")
    if shape == 1:
        return _mixed(rng, ALNUM + "!@#$%^&*", rng.randint(10, 18))
    if shape == 2:
        leet = word.replace("o", "0").replace("e", "3").replace("a", "4")
        return leet + rng.choice("!#$%&*") + _r(rng, DIG, 2)
    if shape == 3:
        return f"{word}-{rng.choice(_WORDS)}-{_r(rng, DIG, 3)}"
    return _r(rng, DIG, 2) + word.upper() + rng.choice("!#$%&*") + rng.choice(_WORDS)


def _pem(rng: random.Random, kind: str) -> str:
    body = "\n".join(_r(rng, B64, 64) for _ in range(3))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def _basic(rng: random.Random) -> str:
    pair = f"{rng.choice(_WORDS)}:{_password(rng)}"
    return base64.b64encode(pair.encode()).decode()


SLOTS: dict[str, Callable[[random.Random, str], str]] = {
    "aws_id": lambda r, a: rng_pick(r, ("AKIA", "ASIA")) + _r(r, UP + DIG, 16),
    "aws_secret": lambda r, a: _mixed(r, B64, 40),
    "gh": lambda r, a: (a or "ghp") + "_" + _r(r, ALNUM, 36),
    "github_pat": lambda r, a: "github_pat_" + _r(r, ALNUM, 22) + "_" + _r(r, ALNUM, 59),
    "glpat": lambda r, a: "glpat-" + _r(r, URLSAFE, 20),
    "slack": lambda r, a: f"xox{a or 'b'}-{_r(r, DIG, 12)}-{_r(r, DIG, 13)}-{_r(r, ALNUM, 24)}",
    "slack_app": lambda r, a: f"xapp-1-A{_r(r, UP + DIG, 10)}-{_r(r, DIG, 13)}-{_r(r, HEX, 64)}",
    "slack_webhook": lambda r, a: (
        f"https://hooks.slack.com/services/T{_r(r, UP + DIG, 8)}/B{_r(r, UP + DIG, 10)}/"
        f"{_r(r, ALNUM, 24)}"
    ),
    "discord": lambda r, a: (
        rng_pick(r, ("M", "N", "O"))
        + _r(r, ALNUM, 23)
        + "."
        + _r(r, URLSAFE, 6)
        + "."
        + _r(r, URLSAFE, 38)
    ),
    "discord_webhook": lambda r, a: (
        f"https://discord.com/api/webhooks/{_r(r, DIG, 18)}/{_r(r, URLSAFE, 68)}"
    ),
    "teams_webhook": lambda r, a: (
        f"https://acme.webhook.office.com/webhookb2/{uuid.UUID(int=r.getrandbits(128))}@"
        f"{uuid.UUID(int=r.getrandbits(128))}/IncomingWebhook/{_r(r, HEX, 32)}/"
        f"{uuid.UUID(int=r.getrandbits(128))}"
    ),
    "telegram": lambda r, a: f"{_r(r, DIG, 10)}:AA{_r(r, URLSAFE, 33)}",
    "stripe": lambda r, a: f"{a or 'sk_live'}_{_r(r, ALNUM, 24)}",
    "openai": lambda r, a: "sk-proj-" + _mixed(r, URLSAFE, 48),
    "anthropic": lambda r, a: "sk-ant-api03-" + _r(r, URLSAFE, 93) + "AA",
    "google": lambda r, a: "AIza" + _r(r, URLSAFE, 35),
    "gocspx": lambda r, a: "GOCSPX-" + _r(r, URLSAFE, 28),
    "sendgrid": lambda r, a: f"SG.{_r(r, URLSAFE, 22)}.{_r(r, URLSAFE, 43)}",
    "npm": lambda r, a: "npm_" + _r(r, ALNUM, 36),
    "pypi": lambda r, a: "pypi-AgEIcHlwaS5vcmc" + _r(r, URLSAFE, 60),
    "hf": lambda r, a: "hf_" + _r(r, ALNUM, 34),
    "twilio": lambda r, a: "SK" + _r(r, HEX, 32),
    "do": lambda r, a: "dop_v1_" + _r(r, HEX, 64),
    "shopify": lambda r, a: f"{a or 'shpat'}_{_r(r, HEX, 32)}",
    "mailgun": lambda r, a: "key-" + _r(r, HEX, 32),
    "square": lambda r, a: "sq0atp-" + _r(r, URLSAFE, 22),
    "atlassian": lambda r, a: "ATATT3xFfGF0" + _r(r, URLSAFE, 170) + "=" + _r(r, HEX.upper(), 8),
    "linear": lambda r, a: "lin_api_" + _r(r, ALNUM, 40),
    "notion": lambda r, a: "ntn_" + _r(r, DIG, 11) + _r(r, ALNUM, 35),
    "postman": lambda r, a: f"PMAK-{_r(r, HEX, 24)}-{_r(r, HEX, 34)}",
    "grafana": lambda r, a: "glsa_" + _r(r, ALNUM, 32) + "_" + _r(r, HEX, 8),
    "vault": lambda r, a: "hvs." + _r(r, URLSAFE, 24),
    "doppler": lambda r, a: "dp.pt." + _r(r, ALNUM, 43),
    "databricks": lambda r, a: "dapi" + _r(r, HEX, 32),
    "pulumi": lambda r, a: "pul-" + _r(r, HEX, 40),
    "supabase": lambda r, a: "sbp_" + _r(r, HEX, 40),
    "newrelic": lambda r, a: "NRAK-" + _r(r, UP + DIG, 27),
    "sentry": lambda r, a: "sntrys_" + _r(r, URLSAFE, 60),
    "age": lambda r, a: "AGE-SECRET-KEY-1" + _r(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "azure_key": lambda r, a: _r(r, B64, 86) + "==",
    "sas_sig": lambda r, a: _r(r, ALNUM + "%", 40) + "%3D",
    "basic": lambda r, a: _basic(r),
    "pw": lambda r, a: _password(r),
    "word": lambda r, a: rng_pick(r, _WORDS),
    "jwt": lambda r, a: (
        f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}."
        f"{_b64url({'sub': _r(r, DIG, 8), 'iat': 1700000000})}.{_r(r, URLSAFE, 43)}"
    ),
    "pem": lambda r, a: _pem(r, a or "PRIVATE KEY"),
    "hex": lambda r, a: _r(r, HEX, int(a or 32)),
    "alnum": lambda r, a: _mixed(r, ALNUM, int(a or 32)),
    "b64": lambda r, a: _mixed(r, B64, int(a or 40)),
    "urlsafe": lambda r, a: _mixed(r, URLSAFE, int(a or 32)),
    "digits": lambda r, a: _r(r, DIG, int(a or 6)),
    "uuid": lambda r, a: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "sha1": lambda r, a: hashlib.sha1(_r(r, ALNUM, 12).encode()).hexdigest(),
    "sha256": lambda r, a: hashlib.sha256(_r(r, ALNUM, 12).encode()).hexdigest(),
    "sha512b64": lambda r, a: base64.b64encode(
        hashlib.sha512(_r(r, ALNUM, 9).encode()).digest()
    ).decode(),
    "evm": lambda r, a: "0x" + _r(r, HEX, 40),
}


def rng_pick(rng: random.Random, options: tuple[str, ...]) -> str:
    return options[rng.randrange(len(options))]


_SLOT = re.compile(r"\{([a-z_0-9]+)(?::([A-Za-z0-9 _]+))?\}")


def fill(template: str, rng: random.Random) -> str:
    """The template with each slot filled; ``\\n`` in a template is a line break."""

    def one(m: re.Match[str]) -> str:
        make = SLOTS.get(m.group(1))  # "{app}" in a code sample is text, not a slot
        return m.group(0) if make is None else make(rng, m.group(2) or "")

    return _SLOT.sub(one, template.replace("\\n", "\n"))


def load(path: str | Path, seed: int = 20261125) -> list[tuple[str, bool, str]]:
    """(text, is a secret, kind) of each line of a corpus file (see the module docstring)."""
    rng = random.Random(seed)
    out: list[tuple[str, bool, str]] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, kind, template = line.split("\t", 2)
        if label not in ("S", "N"):
            raise ValueError(f"{path}: a line's label is S or N, not {label!r}")
        out.append((fill(template, rng), label == "S", kind))
    return out
