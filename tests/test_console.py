"""The memory console (issue 28): `memory-chain ui` as a real server, refused without its
token or from elsewhere, and driven in headless Chromium from Debian's packages
(tests/helpers/console_drive.mjs) as a person uses it. Screenshots of each page at 1280 and
390 pixels go to test-artifacts/console-*.png."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import SCRIPT, Cli

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "helpers" / "console_drive.mjs"
ARTIFACTS = Path(os.environ.get("MEMORY_CHAIN_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str, project: Path) -> None:
        self.proc, self.url, self.project = proc, url, project
        self.origin = url.split("/?")[0]
        self.port = int(self.origin.rsplit(":", 1)[1])

    @property
    def project_md(self) -> Path:
        return self.project / ".memory-chain" / "MEMORY.md"


@pytest.fixture
def console(cli: Cli, tmp_path: Path) -> Iterator[tuple[Cli, Served]]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    cli.ok("init", "--name", "console-test")
    cli.ok("add", "We deploy the web app on Tuesdays", "--type", "decision")
    cli.ok("add", "The staging database listens on port 5433", "--type", "fact")
    at = ("--project", str(project))
    cli.ok("remember", "Use pnpm, not npm", "--section", "Conventions", "--scope", "project", *at)
    cli.ok("remember", "Prefers short answers", "--section", "User Preferences")
    agent = ("--origin", "agent", "--scope", "project", *at)
    cli.ok("remember", "Runs the linter before each commit", "--section", "Workflow", *agent)
    cli.ok("remember", "Always push straight to main", "--section", "Workflow", *agent)
    start = {
        "session_id": "5e55104d-console",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(project),
    }
    assert cli.run("hook", "SessionStart", stdin=json.dumps(start).encode()).code == 0
    proc = subprocess.Popen(
        [SCRIPT, "ui", "--project", str(project)],
        env={**cli.env, "MEMORY_CHAIN_SEMANTIC": "0"},
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:") and "/?token=" in url, url
    served = Served(proc, url, project)
    try:
        yield cli, served
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _get(
    url: str, headers: dict[str, str] | None = None, data: bytes | None = None
) -> tuple[int, dict[str, str], str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with opener.open(request, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def _listening_on(port: int) -> set[str]:
    """The local addresses of sockets listening on ``port`` (/proc/net/tcp, tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, _, hexport = local.partition(":")
            if int(hexport, 16) == port and state == "0A":  # LISTEN
                found.add(address)
    return found


def test_only_the_person_with_the_link_gets_in(console: tuple[Cli, Served]) -> None:
    """No token, a spent token, another Host, another origin, a path outside the memory
    files: each refused. The server listens on 127.0.0.1 only."""
    cli, s = console
    assert _listening_on(s.port) == {"0100007F"}  # 127.0.0.1, nothing else
    assert _get(s.origin + "/")[0] == 403
    assert _get(s.origin + "/?token=wrong")[0] == 403
    status, headers, _ = _get(s.url)
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"].split(";")[0]
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    assert _get(s.url)[0] == 403  # the token works once
    me = {"Cookie": cookie}
    status, headers, page = _get(s.origin + "/", me)
    assert status == 200 and "Prefers short answers" in page
    assert "script-src" not in headers["content-security-policy"]
    assert headers["content-security-policy"].startswith("default-src 'none'")
    assert _get(s.origin + "/", {**me, "Host": f"evil.example:{s.port}"})[0] == 403
    before = s.project_md.read_bytes()
    form = b"id=project:7&action=reject"
    assert _get(s.origin + "/review", me, form)[0] == 403  # no Origin
    evil = {**me, "Origin": "http://evil.example"}
    assert _get(s.origin + "/review", evil, form)[0] == 403
    assert s.project_md.read_bytes() == before
    for path in ("../../../etc/passwd", "/etc/passwd", "memory/../../x.md", ".git/config"):
        status, _, page = _get(f"{s.origin}/file?scope=user&path={path}", me)
        assert status == 403 and "memory files are shown" in page, path
    log = (cli.root / "logs" / "console").read_text().splitlines()
    assert any(line.endswith("GET /file 403") for line in log)
    assert len(log) >= 12


def _drive(s: Served, steps: list[dict[str, Any]]) -> dict[str, Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/test does)")
    done = subprocess.run(
        ["node", str(DRIVER)],
        input=json.dumps({"url": s.url, "steps": steps}),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert out["requests"] == [] and out["errors"] == [], out
    return out


PAGES = ("/", "/?scope=project", "/review", "/search?q=deploy", "/session", "/integrity")


def test_each_page_at_both_widths(console: tuple[Cli, Served]) -> None:
    _, s = console
    ARTIFACTS.mkdir(exist_ok=True)
    steps: list[dict[str, Any]] = [{"do": "goto", "path": s.url}]
    for width in (1280, 390):
        steps.append({"do": "viewport", "width": width})
        for path in PAGES:
            name = path.strip("/").replace("?", "-").replace("=", "-") or "memories"
            steps += [
                {"do": "goto", "path": path},
                {"do": "read"},
                {"do": "shot", "path": str(ARTIFACTS / f"console-{name}-{width}.png")},
            ]
    reads = _drive(s, steps)["reads"]
    assert [r["status"] for r in reads] == [200] * 2 * len(PAGES)
    memories, project, review, search, session, integrity = reads[: len(PAGES)]
    assert "Prefers short answers" in memories["text"] and "a person's words" in memories["text"]
    assert "seq 2 · signed, verified" in memories["text"]  # the newest in the chain
    assert "Use pnpm, not npm" in project["text"]
    assert "waits for review" in project["text"]
    assert "Runs the linter before each commit" in review["text"]
    assert "We deploy the web app on Tuesdays" in search["text"]
    assert "Memory context" in session["text"] and "tokens" in session["text"]
    assert "session 5e55104d · startup · 6 memories" in session["text"]
    assert "The chain verifies: 3 entries" in integrity["text"]
    for path in PAGES:
        name = path.strip("/").replace("?", "-").replace("=", "-") or "memories"
        assert (ARTIFACTS / f"console-{name}-390.png").stat().st_size > 5000


def test_review_edit_conflict_search_and_prove_in_the_browser(
    console: tuple[Cli, Served], tmp_path: Path
) -> None:
    cli, s = console
    bundle, html = tmp_path / "proof.json", tmp_path / "proof.html"
    steps: list[dict[str, Any]] = [
        {"do": "goto", "path": s.url},
        {"do": "goto", "path": "/review"},
        {"do": "click", "selector": "button[aria-label='Approve project:7']"},
        {"do": "read"},
        {"do": "click", "selector": "button[aria-label='Reject project:8']"},
        {"do": "read"},
        # an edit that meets a change made meanwhile: both texts shown, nothing lost
        {"do": "goto", "path": "/edit?scope=project&line=4"},
        {"do": "fill", "selector": "#text", "value": "Use pnpm, never npm or yarn"},
        {
            "do": "replace",
            "file": str(s.project_md),
            "old": "Use pnpm, not npm",
            "new": "Use pnpm 9, not npm",
        },
        {"do": "click", "selector": "button[type=submit]"},
        {"do": "read"},
        {"do": "click", "selector": "text=Keep mine"},
        {"do": "read"},
        # a secret typed into the editor is refused, with its kind
        {"do": "goto", "path": "/edit?scope=user&line=4"},
        {"do": "fill", "selector": "#text", "value": "The AWS key is AKIAQ7W2E4R6T8Y1U3I5"},
        {"do": "click", "selector": "button[type=submit]"},
        {"do": "read"},
        # search with the keyboard: the form, typed words, Enter
        {"do": "goto", "path": "/search"},
        {"do": "fill", "selector": "#q", "value": "staging database"},
        {"do": "press", "keys": ["Enter"]},
        {"do": "read"},
        {"do": "goto", "path": "/integrity"},
        {"do": "fill", "selector": "#seq", "value": "1"},
        {"do": "download", "selector": "button[value=bundle]", "path": str(bundle)},
        {"do": "download", "selector": "button[value=page]", "path": str(html)},
    ]
    approved, rejected, conflict, kept, secret, found = _drive(s, steps)["reads"]
    assert "Approved project:7" in approved["text"]
    assert "Rejected project:8" in rejected["text"]
    assert "Nothing waits for review." in rejected["text"]
    assert conflict["status"] == 409 and "changed while you edited it" in conflict["text"]
    assert "Use pnpm 9, not npm" in conflict["text"] and "never npm or yarn" in conflict["text"]
    assert kept["url"].endswith("/?scope=project") and "never npm or yarn" in kept["text"]
    md = s.project_md.read_text()
    assert "Use pnpm, never npm or yarn" in md and "Always push straight to main" not in md
    archive = "".join(p.read_text() for p in (s.project / ".memory-chain").rglob("archive/*.md"))
    assert "- Use pnpm 9, not npm" in archive  # the words the edit replaced are kept
    assert secret["status"] == 422 and "AWS access key id" in secret["text"]
    written = [p.read_text() for p in (cli.root / "workspace").rglob("*.md")]
    assert written and all("AKIAQ7W2E4R6T8Y1U3I5" not in text for text in written)
    assert found["url"].endswith("q=staging+database&type=&tier=&source=&scope=&since=&until=")
    assert "The staging database listens on port 5433" in found["text"]
    chain_id = cli.ok("stats", "--json").json()["chain_id"]
    checked = cli.ok("verify-proof", str(bundle), "--chain-id", chain_id)
    assert checked.out.startswith("ok: entry 1 (decision")
    assert b'id="proof-data"' in html.read_bytes()


def test_the_keyboard_alone_reaches_and_uses_a_control(console: tuple[Cli, Served]) -> None:
    """Tab from the top of the Review page: the five page links, then the first entry's
    Approve button; Enter approves it (each control is a real link or button)."""
    _, s = console
    steps: list[dict[str, Any]] = [
        {"do": "goto", "path": s.url},
        {"do": "goto", "path": "/review"},
        {"do": "press", "keys": ["Tab"] * 6 + ["Enter"]},
        {"do": "read"},
    ]
    (approved,) = _drive(s, steps)["reads"]
    assert approved["status"] == 200 and "Approved project:7" in approved["text"]
    assert "Runs the linter before each commit <!-- mc:" in s.project_md.read_text()
    assert "ok=" in s.project_md.read_text().split("Runs the linter")[1].splitlines()[0]


def test_contradictions_are_settled_side_by_side(console: tuple[Cli, Served]) -> None:
    """Two entries of one section that say opposite things: keep right archives the left
    one; keep both keeps both and the pair is not shown again."""
    cli, s = console
    user_md = cli.root / "workspace" / "MEMORY.md"
    with user_md.open("a") as f:
        f.write("- Use tabs, not spaces\n- Use spaces, not tabs\n")
    with s.project_md.open("a") as f:
        f.write("\n## Deploys\n- Always deploy on Fridays\n- Never deploy on Fridays\n")
    lines = user_md.read_text().splitlines()
    left, right = (
        lines.index("- Use tabs, not spaces") + 1,
        lines.index("- Use spaces, not tabs") + 1,
    )
    pair = f"user:{left}:{right}"
    steps: list[dict[str, Any]] = [
        {"do": "goto", "path": s.url},
        {"do": "goto", "path": "/review"},
        {"do": "read"},
        {"do": "click", "selector": f"button[aria-label='Keep right of {pair}']"},
        {"do": "read"},
        {"do": "click", "selector": "button[aria-label='Keep both of project:11:12']"},
        {"do": "read"},
    ]
    listed, settled, both = _drive(s, steps)["reads"]
    assert "Contradictions" in listed["text"] and "Use tabs, not spaces" in listed["text"]
    assert f"Kept the right entry of {pair}; archived: Use tabs, not spaces" in settled["text"]
    text = user_md.read_text()
    assert "- Use spaces, not tabs" in text and "- Use tabs, not spaces" not in text
    archive = "".join(p.read_text() for p in (cli.root / "workspace").rglob("archive/*.md"))
    assert "> Reason: contradicted: kept line" in archive and "- Use tabs, not spaces" in archive
    assert "Kept both entries of project:11:12" in both["text"]
    assert "No two entries of a section contradict each other." in both["text"]
    assert "Always deploy on Fridays" in s.project_md.read_text()


def test_review_quotes_the_turn_a_capture_came_from(
    console: tuple[Cli, Served], tmp_path: Path
) -> None:
    """Issue 28: each waiting entry with its evidence: the daily line it was captured to,
    and the person's turn, quoted from the transcript capture read."""
    from helpers import transcripts as cc

    cli, s = console
    said = "I prefer dark mode in every editor, it is easier on my eyes."
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(cc.jsonl([cc.user("Can you look at the build?"), cc.user(said)]))
    cli.ok("capture", "--transcript", str(transcript), "--project", str(s.project))
    cli.ok("curate", "--project", str(s.project))
    steps: list[dict[str, Any]] = [
        {"do": "goto", "path": s.url},
        {"do": "goto", "path": "/review"},
        {"do": "read"},
    ]
    (page,) = _drive(s, steps)["reads"]
    assert "captured from a conversation" in page["text"]
    assert said in page["text"] and "the person's turn" in page["text"]
    assert "captured at local:memory/" in page["text"]


def test_a_busy_port_is_a_one_line_error_and_changes_nothing(raw: Cli) -> None:
    before = raw.chain.read_bytes()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        busy = raw.run("ui", "--port", port)
    assert busy.code != 0 and busy.out == ""
    assert busy.err.startswith(f"error: cannot listen on 127.0.0.1:{port}")
    assert len(busy.err.strip().splitlines()) <= 2  # the error and its hint
    assert raw.run("ui", "--port", "70000").code == 2  # not a port
    assert raw.chain.read_bytes() == before


def test_a_badge_says_verified_only_for_the_words_the_chain_holds(
    console: tuple[Cli, Served],
) -> None:
    """A MEMORY.md entry that names a chain seq is "signed, verified" only when the chain
    verifies to it and that memory holds the entry's words; an entry edited after it was
    committed says so instead."""
    cli, s = console
    with (cli.root / "workspace" / "MEMORY.md").open("a") as f:
        f.write("\n## Decisions\n- We deploy the web app on Tuesdays <!-- mc: seq=1 -->\n")
        f.write("- The staging database listens on port 6000 <!-- mc: seq=2 -->\n")
    cookie = _get(s.url)[1]["set-cookie"].split(";")[0]
    status, _, page = _get(s.origin + "/?scope=user", {"Cookie": cookie})
    assert status == 200
    tuesdays = page.split("We deploy the web app on Tuesdays")[1].split("</li>")[0]
    assert "seq 1 · signed, verified" in tuesdays
    edited = page.split("listens on port 6000")[1].split("</li>")[0]
    assert "seq 2 · not verified: claims chain seq 2 but its text is not" in edited
    assert "signed, verified" not in edited
