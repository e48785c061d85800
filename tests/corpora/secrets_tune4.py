"""The secret corpus, fourth tuning part: a grammar.

Written as a held-out part after the rules were tuned on the three
secrets-tune*.tsv files, by a fourth method unlike them (hand-written
lines): a small grammar of frames, names of secrets, systems and values,
with a vocabulary written for it (synonyms and frames the rules had not
seen, values before their names, passwords of shapes the tuning generator
never makes) and, for every secret frame, a counterpart that holds no
secret (a reference, a placeholder, or a random-looking value that names
no secret: a build id, a digest, a trace id). The rules as they then stood
blocked 81.2 % of its secrets with 2.5 % false positives
(benchmarks/README.md); its misses were then fixed, so it is a tuning part
now; secrets-heldout.tsv was written after that.

``corpus()`` returns (text, is a secret, kind) for 320 strings, the same on
every run.
"""

from __future__ import annotations

import random
import string
import uuid

SEED = 4242

NAMES = (
    "password",
    "passphrase",
    "login password",
    "admin password",
    "root pw",
    "passcode",
    "access code",
    "API key",
    "api token",
    "auth token",
    "access token",
    "secret key",
    "client secret",
    "signing secret",
    "private token",
    "app password",
    "master password",
    "encryption key",
    "shared secret",
    "bot token",
    "service account key",
    "deploy token",
    "refresh token",
    "session token",
    "PAT",
    "webhook secret",
    "unlock code",
    "admin pass",
)
SYSTEMS = (
    "the staging database",
    "our Jenkins",
    "the prod Redis",
    "the VPN",
    "the office wifi",
    "Grafana",
    "the CI runner",
    "the billing API",
    "the S3 backup",
    "my laptop",
    "the router",
    "the NAS",
    "Sentry",
    "the mail server",
    "the ERP",
    "the analytics warehouse",
    "Kibana",
    "the build cache",
    "the HR portal",
    "the lab printer",
)
SECRET_FRAMES = (
    "{Name} for {sys}: {v}",
    "{sys} {name} = {v}",
    "the {name} of {sys} is {v}",
    "I changed the {name} for {sys} to {v}",
    "{sys} -> {name} {v}",
    "use {v} as the {name} for {sys}",
    "note: {name} ({sys}) is {v}",
    "{name}: {v} (for {sys})",
    "for {sys}, the {name} we use is {v}",
    "the new {name} is {v}, the old one is revoked",
    "{sys} login: admin, {name}: {v}",
    "here's the {name} - {v}",
    "{v} is the {name} for {sys}",
    "keep this safe: {v} ({sys} {name})",
    "Remember the {name} for {sys}, it's {v}",
    "{sys} creds -> user ops / {v}",
)
#: The same frames, holding no secret.
SAFE_FILLERS = (
    "in 1Password",
    "stored in Vault under secret/ops",
    "${OPS_SECRET}",
    "<redacted>",
    "whatever IT gave you",
    "rotated monthly",
    "not set yet",
    "the one on the sticker",
    "managed by SSO",
    "the same as staging",
    "in the .env file",
    "8 characters minimum",
    "$(pass show ops/login)",
    "[hidden]",
    "on the whiteboard",
    "REPLACE_ME",
)
THINGS = (
    "build id",
    "commit",
    "trace id",
    "checksum",
    "image digest",
    "request id",
    "account id",
    "object key",
    "cache key",
    "etag",
    "correlation id",
    "release hash",
    "tenant id",
    "device serial",
    "order number",
)
THING_FRAMES = (
    "the {thing} for {sys} is {v}",
    "{sys} {thing}: {v}",
    "{thing} {v} ({sys})",
    "I looked up the {thing} of {sys}: {v}",
)


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _secret_value(rng: random.Random) -> str:
    a = string.ascii_letters + string.digits
    kind = rng.randrange(9)
    if kind == 0:  # a typed password with symbols
        return _r(rng, a + "#$%&*!?@^", rng.randint(10, 16))
    if kind == 1:  # a season and a year
        season = rng.choice(("Spring", "Summer", "Autumn", "Winter"))
        return f"{season}{rng.randint(2019, 2027)}{rng.choice('!#$?')}"
    if kind == 2:  # words and a number, hyphenated
        words = ("correct", "horse", "battery", "staple", "granite", "velvet", "anchor", "pixel")
        return "-".join(rng.sample(words, 3)) + f"-{rng.randint(10, 99)}"
    if kind == 3:
        return _r(rng, "0123456789abcdef", rng.choice((32, 40, 64)))
    if kind == 4:
        return _r(rng, a + "+/", 40)
    if kind == 5:
        return _r(rng, a + "-_", rng.randint(32, 48))
    if kind == 6:  # leet
        base = rng.choice(("p@ssw0rd", "adm1n", "l3tme1n", "s3cur1ty", "m0nkey"))
        return base.capitalize() + str(rng.randint(1, 999)) + rng.choice("!#$")
    if kind == 7:
        return _r(rng, a, rng.randint(24, 40))
    return _r(rng, string.ascii_uppercase + string.digits, 20)


def _thing_value(rng: random.Random, thing: str) -> str:
    if "id" in thing or thing in ("order number", "device serial"):
        return (
            str(uuid.UUID(int=rng.getrandbits(128), version=4))
            if rng.random() < 0.5
            else (_r(rng, string.ascii_uppercase + string.digits, 12))
        )
    if thing in ("commit", "release hash", "checksum", "etag"):
        return _r(rng, "0123456789abcdef", rng.choice((12, 40, 64)))
    if thing == "image digest":
        return "sha256:" + _r(rng, "0123456789abcdef", 64)
    return f"{rng.choice(('tenants', 'logs', 'assets'))}/{rng.randint(2020, 2026)}/" + _r(
        rng, string.ascii_lowercase + string.digits, 10
    )


def _fill(frame: str, rng: random.Random, name: str, value: str) -> str:
    sys_ = rng.choice(SYSTEMS)
    text = frame.format(name=name, Name=name[:1].upper() + name[1:], sys=sys_, v=value)
    return text[:1].upper() + text[1:] if rng.random() < 0.5 else text


def corpus() -> list[tuple[str, bool, str]]:
    rng = random.Random(SEED)
    out: list[tuple[str, bool, str]] = []
    for n in range(160):
        frame = SECRET_FRAMES[n % len(SECRET_FRAMES)]
        name = rng.choice(NAMES)
        out.append((_fill(frame, rng, name, _secret_value(rng)), True, f"frame-{n % 16}"))
    for n in range(96):  # the same frames with no secret in them
        frame = SECRET_FRAMES[n % len(SECRET_FRAMES)]
        name = rng.choice(NAMES)
        filler = rng.choice(SAFE_FILLERS)
        out.append((_fill(frame, rng, name, filler), False, f"safe-frame-{n % 16}"))
    for n in range(64):  # random-looking values that name no secret
        thing = rng.choice(THINGS)
        frame = THING_FRAMES[n % len(THING_FRAMES)].replace("{thing}", thing)
        value = _thing_value(rng, thing)
        out.append((_fill(frame, rng, thing, value), False, f"thing-{thing}"))
    return out
