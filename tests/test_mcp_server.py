"""The MCP server (issue 13): the official SDK's client against `memory-chain mcp` as a
real subprocess over stdio, and the MCP Inspector's CLI (npm) against the same server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.cli import SCRIPT, Cli
from helpers.mcp_client import session as _session
from helpers.mcp_client import text as _text
from mcp import ClientSession

ROOT = Path(__file__).resolve().parent.parent
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture
def served(populated: Cli, tmp_path: Path) -> tuple[Cli, Path]:
    populated.ok("remember", "Prefers short answers", "--section", "User Preferences")
    here = tmp_path / "server-cwd"
    here.mkdir()
    return populated, here


TOOLS = {
    "search",
    "add",
    "remember",
    "review_queue",
    "context",
    "list_files",
    "read_file",
    "write_file",
    "patch_file",
    "append_file",
    "delete_file",
    "rename_file",
    "verify",
    "prove",
    "get",
    "supersede",
    "redact",
    "recent",
}


def test_tools_have_typed_input_schemas(served: tuple[Cli, Path]) -> None:
    async def body(s: ClientSession) -> Any:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in _session(*served, body)}
    assert TOOLS == set(tools)
    search = tools["search"].input_schema
    assert ["query"] == search["required"]
    assert "string" == search["properties"]["query"]["type"]
    assert "integer" == search["properties"]["limit"]["type"]
    scope = tools["read_file"].input_schema["properties"]["scope"]
    assert ["user", "project", "local"] == scope["enum"]
    assert all(t.description for t in tools.values())
    undescribed = [
        (t.name, name)
        for t in tools.values()
        for name, prop in t.input_schema.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert undescribed == []
    add = tools["add"].input_schema["properties"]
    assert "committed" in add["tier"]["enum"] and "decision" in add["type"]["enum"]
    assert ["seq", "hash", "ts", "content"] == list(tools["add"].output_schema["properties"])


def test_every_tool_has_a_title_and_says_what_it_may_do(served: tuple[Cli, Path]) -> None:
    """Issue 26: titles and annotations, so a client can ask before what writes or
    destroys, and let what only reads run."""

    async def body(s: ClientSession) -> Any:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in _session(*served, body)}
    for t in tools.values():
        hints = t.annotations
        assert t.title and hints is not None, t.name
        assert hints.open_world_hint is False, t.name
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        assert not (hints.read_only_hint and hints.destructive_hint), t.name
    reads = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert reads == {
        "search",
        "get",
        "recent",
        "review_queue",
        "context",
        "list_files",
        "read_file",
        "verify",
    }
    destroys = {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint}
    assert destroys == {"write_file", "patch_file", "delete_file", "rename_file", "redact"}


def test_a_session_adds_searches_remembers_and_proves(served: tuple[Cli, Path]) -> None:
    cli, here = served

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        added = await s.call_tool(
            "add", {"content": "The API is versioned by date", "type": "decision"}
        )
        out["added"] = json.loads(_text(added))
        out["search"] = json.loads(_text(await s.call_tool("search", {"query": "pnpm"})))
        out["remember"] = json.loads(
            _text(await s.call_tool("remember", {"text": "Deploys need a green CI run"}))
        )
        out["context"] = _text(await s.call_tool("context", {"query": "deploy"}))
        out["queue"] = json.loads(_text(await s.call_tool("review_queue", {})))
        out["verify"] = json.loads(_text(await s.call_tool("verify", {})))
        out["prove"] = json.loads(_text(await s.call_tool("prove", {"seq": 1})))
        return out

    out = _session(cli, here, body)
    assert 5 == out["added"]["seq"]
    assert "Use pnpm, not npm" == out["search"]["results"][0]["text"]
    assert "provable" == out["search"]["results"][0]["kind"]
    assert "added" == out["remember"]["action"]
    # the agent's entry is a dated note until a person approves it (issue 23)
    assert "Deploys need a green CI run (remembered automatically on" in out["context"]
    assert ["Deploys need a green CI run"] == [w["text"] for w in out["queue"]["waiting"]]
    assert "agent" == out["queue"]["waiting"][0]["origin"]
    assert "Integrity: verified" in out["context"]
    assert out["verify"]["ok"] is True and 6 == out["verify"]["entries"]
    bundle = cli.root / "seq1.proof.json"
    bundle.write_text(json.dumps(out["prove"]))
    check = cli.run("verify-proof", str(bundle), "--trusted-key", str(cli.root / "agent.pub"))
    assert 0 == check.code, check.err
    # the chain entry is really there, signed, and the MEMORY.md line really written
    assert "The API is versioned by date" in cli.ok("show", "5", "--content").out
    assert "Deploys need a green CI run" in (cli.root / "workspace" / "MEMORY.md").read_text()


def test_the_file_tools_work_through_the_sandbox(served: tuple[Cli, Path]) -> None:
    async def body(s: ClientSession) -> list[Any]:
        calls = [
            ("write_file", {"path": "facts/stack.md", "content": "# Stack\n\n- Python 3.11\n"}),
            ("append_file", {"path": "facts/stack.md", "entry": "## DB\n- SQLite\n"}),
            ("patch_file", {"path": "facts/stack.md", "patches": [{"old": "3.11", "new": "3.12"}]}),
            ("read_file", {"path": "facts/stack.md"}),
            ("list_files", {}),
            ("rename_file", {"old": "facts/stack.md", "new": "facts/tech.md"}),
            ("delete_file", {"path": "facts/tech.md"}),
            ("read_file", {"path": "facts/tech.md"}),
        ]
        return [await s.call_tool(name, args) for name, args in calls]

    results = _session(*served, body)
    assert [False] * 7 + [True] == [r.is_error for r in results]
    assert "Python 3.12" in _text(results[3]) and "SQLite" in _text(results[3])
    assert "facts/stack.md" in _text(results[4])


BAD_CALLS = [
    ("read_file", {"path": "../../etc/passwd"}, "climbs out"),
    ("read_file", {"path": "/etc/passwd"}, "absolute"),
    ("write_file", {"path": "notes.md", "content": "key sk-ant-api03-" + "a" * 90}, "secret"),
    ("write_file", {"path": "script.sh", "content": "echo"}, "only markdown"),
    ("prove", {"seq": 999}, "no entry with seq 999"),
    ("get", {"seq": 999}, "no entry with seq 999"),
    ("supersede", {"seq": 999, "content": "x"}, "supersedes 999: there is no entry 999"),
    ("search", {"query": ""}, ""),
    ("search", {"limit": 5}, ""),
    # an enum in the schema (issue 26): the SDK refuses it, naming the argument and the values
    ("add", {"content": "x", "type": "nonsense"}, "type: input should be 'memory'"),
    ("add", {"content": "x", "tier": "comitted"}, "tier: input should be 'committed'"),
    ("add", {"content": "password=hunter2hunter2"}, "secret"),
    ("remember", {"text": "x", "scope": "project"}, "no project"),
    ("read_file", {"path": "MEMORY.md", "scope": "galaxy"}, ""),
    ("no_such_tool", {}, "unknown tool"),
]


def test_bad_input_is_a_tool_error_and_the_server_lives_on(served: tuple[Cli, Path]) -> None:
    cli, here = served
    before = cli.chain.read_bytes()

    async def body(s: ClientSession) -> list[Any]:
        out = [await s.call_tool(name, args) for name, args, _ in BAD_CALLS]
        out.append(await s.call_tool("search", {"query": "pnpm"}))  # still serving
        return out

    results = _session(cli, here, body)
    for (name, _args, says), r in zip(BAD_CALLS, results, strict=False):
        assert r.is_error is True, (name, _text(r))
        assert says.lower() in _text(r).lower(), (name, _text(r))
    assert results[-1].is_error is False
    assert before == cli.chain.read_bytes()
    assert not (cli.root / "workspace" / "script.sh").exists()


def test_resources_are_the_memory_files_and_the_context(served: tuple[Cli, Path]) -> None:
    async def body(s: ClientSession) -> Any:
        listed = (await s.list_resources()).resources
        user = await s.read_resource("memory://user/MEMORY.md")
        ctx = await s.read_resource("memory://context")
        return listed, user, ctx

    listed, user, ctx = _session(*served, body)
    assert {"memory://user/MEMORY.md", "memory://context"} <= {str(r.uri) for r in listed}
    assert "Prefers short answers" in user.contents[0].text
    assert "Use pnpm, not npm" in ctx.contents[0].text


def test_the_server_sees_the_project_it_runs_in(served: tuple[Cli, Path], tmp_path: Path) -> None:
    cli, _ = served
    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)

    async def body(s: ClientSession) -> Any:
        await s.call_tool("remember", {"text": "Use make for builds", "scope": "project"})
        return [str(r.uri) for r in (await s.list_resources()).resources]

    uris = _session(cli, project, body)
    assert "memory://project/MEMORY.md" in uris and "memory://local/MEMORY.md" in uris
    assert "Use make for builds" in (project / ".memory-chain" / "MEMORY.md").read_text()


# -- the MCP Inspector's CLI ----------------------------------------------------------


def _inspector(cli: Cli, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # The Inspector hands the server a default environment: the data directory goes by -e.
    return subprocess.run(
        [str(INSPECTOR), "--cli", "-e", f"MEMORY_CHAIN_DIR={cli.root}", SCRIPT, "mcp", *args],
        env=cli.env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_inspector_cli_lists_and_calls_tools(served: tuple[Cli, Path]) -> None:
    cli, here = served
    assert INSPECTOR.exists(), "npm ci installs @modelcontextprotocol/inspector"
    listed = _inspector(cli, here, "--method", "tools/list")
    assert 0 == listed.returncode, listed.stderr
    assert TOOLS == {t["name"] for t in json.loads(listed.stdout)["tools"]}
    for t in json.loads(listed.stdout)["tools"]:  # what the Inspector shows a person
        assert t["title"] and "readOnlyHint" in t["annotations"], t
        assert t["outputSchema"]["properties"] and t["outputSchema"]["required"], t["name"]
    prompts = _inspector(cli, here, "--method", "prompts/list")
    assert 0 == prompts.returncode, prompts.stderr
    names = {p["name"] for p in json.loads(prompts.stdout)["prompts"]}
    assert {"recall", "review", "changes-since"} == names
    templates = _inspector(cli, here, "--method", "resources/templates/list")
    assert 0 == templates.returncode, templates.stderr
    uris = {t["uriTemplate"] for t in json.loads(templates.stdout)["resourceTemplates"]}
    assert {"memory://entry/{seq}", "memory://proof/{seq}", "memory://{scope}/files/{path}"} == uris
    called = _inspector(
        cli, here, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=pnpm"
    )
    assert 0 == called.returncode, called.stderr
    result = json.loads(called.stdout)
    assert result["isError"] is False
    assert "Use pnpm, not npm" in result["content"][0]["text"]
    bad = _inspector(
        cli, here, "--method", "tools/call", "--tool-name", "prove", "--tool-arg", "seq=999"
    )
    assert 0 != bad.returncode  # Inspector 2.x: a tool error is exit 5
    assert '"isError": true' in bad.stdout


def test_without_init_what_is_remembered_can_be_read_back(cli: Cli, tmp_path: Path) -> None:
    """Issue 22: before `init`, MCP remember succeeded but context and search failed (an agent
    stored what it could not read back). Both read the workspace now, and say there is no chain;
    the data directory gains only the workspace."""
    here = tmp_path / "cwd"
    here.mkdir()

    async def body(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["remember"] = json.loads(
            _text(await s.call_tool("remember", {"text": "Deploys need a green CI run"}))
        )
        found = await s.call_tool("search", {"query": "deploys green"})
        out["search"] = (found.is_error, _text(found))
        context = await s.call_tool("context", {})
        out["context"] = (context.is_error, _text(context))
        return out

    out = _session(cli, here, body)
    assert "added" == out["remember"]["action"]
    assert out["search"][0] is False and "Deploys need a green CI run" in out["search"][1]
    assert out["context"][0] is False
    assert "Integrity: no chain yet" in out["context"][1]
    assert "Deploys need a green CI run" in out["context"][1]
    assert ["workspace"] == sorted(p.name for p in cli.root.iterdir())


def test_file_tools_never_lose_memory_md_and_keep_what_they_delete(
    served: tuple[Cli, Path],
) -> None:
    """Issue 22: delete_file deleted for good (its description says the file is kept), and
    deleted MEMORY.md too; write_file overwrote MEMORY.md. Now a deleted file is in the
    archive, and MEMORY.md is neither deleted nor replaced whole (both tool errors)."""
    cli, here = served
    memory = cli.root / "workspace" / "MEMORY.md"
    before = memory.read_bytes()

    async def body(s: ClientSession) -> dict[str, Any]:
        await s.call_tool("write_file", {"path": "memory/deploy.md", "content": "# Deploy\n"})
        deleted = json.loads(_text(await s.call_tool("delete_file", {"path": "memory/deploy.md"})))
        gone = await s.call_tool("delete_file", {"path": "MEMORY.md"})
        replaced = await s.call_tool("write_file", {"path": "MEMORY.md", "content": "# Mine\n"})
        renamed = await s.call_tool("rename_file", {"old": "MEMORY.md", "new": "memory/x.md"})
        return {
            "deleted": deleted,
            "refused": [(r.is_error, _text(r)) for r in (gone, replaced, renamed)],
        }

    out = _session(cli, here, body)
    kept = cli.root / "workspace" / out["deleted"]["kept"]
    assert "# Deploy\n" == kept.read_text()
    assert not (cli.root / "workspace" / "memory" / "deploy.md").exists()
    for is_error, text in out["refused"]:
        assert is_error is True and "MEMORY.md is not" in text and "by a tool" in text
    assert memory.read_bytes() == before


def test_tool_errors_are_one_line_with_no_command_line_hints(served: tuple[Cli, Path]) -> None:
    """Issue 22: MCP errors carried CLI-only hints (--child, --allow-secret) and pydantic's
    multi-line validation text. Each is one line an agent can act on now."""

    async def body(s: ClientSession) -> list[str]:
        calls = [
            ("add", {}),
            ("search", {"query": "x", "limit": "many"}),
            ("remember", {"text": "one\ntwo"}),
            ("add", {"content": "the key is AKIAQ7W2E4R6T8Y1U3I5"}),
        ]
        out = []
        for name, args in calls:
            result = await s.call_tool(name, args)
            assert result.is_error, (name, args)
            out.append(_text(result))
        return out

    texts = _session(*served, body)
    for text in texts:
        assert "\n" not in text and "--" not in text and "pydantic" not in text, text
    assert texts[0] == "invalid arguments for add: content: Field required"
    assert texts[1].startswith("invalid arguments for search: limit: ")


def test_prompts_and_resource_templates(served: tuple[Cli, Path]) -> None:
    """Issue 26: the prompts the server advertises exist, and a memory, a proof and a
    workspace file can be read by address."""

    async def body(s: ClientSession) -> Any:
        prompts = (await s.list_prompts()).prompts
        recall = await s.get_prompt("recall", {"topic": "package manager"})
        templates = (await s.list_resource_templates()).resource_templates
        entry = await s.read_resource("memory://entry/1")
        proof = await s.read_resource("memory://proof/1")
        md = await s.read_resource("memory://user/files/MEMORY.md")
        got = await s.call_tool("get", {"seq": 1})
        return prompts, recall, templates, entry, proof, md, got

    prompts, recall, templates, entry, proof, md, got = _session(*served, body)
    assert {"recall", "review", "changes-since"} == {p.name for p in prompts}
    assert all(p.title and p.description for p in prompts)
    assert "package manager" in recall.messages[0].content.text
    assert {"memory://entry/{seq}", "memory://proof/{seq}", "memory://{scope}/files/{path}"} == {
        t.uri_template for t in templates
    }
    shown = json.loads(entry.contents[0].text)
    assert shown["text"] == "Use pnpm, not npm" and shown["seq"] == 1
    assert json.loads(proof.contents[0].text)["format"] == "memory-chain-proof/1"
    assert "Prefers short answers" in md.contents[0].text
    assert got.is_error is False and got.structured_content["text"] == "Use pnpm, not npm"


def test_search_has_a_compact_form_a_next_page_and_a_hint(served: tuple[Cli, Path]) -> None:
    async def body(s: ClientSession) -> Any:
        compact = await s.call_tool("search", {"query": "pnpm", "compact": True})
        paged = await s.call_tool("search", {"query": "pnpm port check", "limit": 1})
        none = await s.call_tool("search", {"query": "zebra"})
        filtered = await s.call_tool("search", {"query": "pnpm", "since": "2999-01-01"})
        return compact, paged, none, filtered

    compact, paged, none, filtered = _session(*served, body)
    result = compact.structured_content
    assert result["results"] == [] and result["text"].startswith("[guidance] seq 1 decision:")
    assert "Use pnpm, not npm" in result["text"]
    assert paged.structured_content["next_offset"] == 1
    assert none.structured_content["results"] == []
    assert none.structured_content["hint"].startswith("nothing matched: try other words")
    assert "fewer filters" in filtered.structured_content["hint"]


def test_supersede_and_recent(served: tuple[Cli, Path]) -> None:
    """Issue 26: an agent replaces a memory it finds wrong; the old one leaves search and
    the recent list, and stays in the chain."""

    async def body(s: ClientSession) -> Any:
        new = await s.call_tool(
            "supersede", {"seq": 3, "content": "Staging is on 5434", "type": "fact"}
        )
        found = await s.call_tool("search", {"query": "staging"})
        recent = await s.call_tool("recent", {"limit": 3})
        old = await s.call_tool("get", {"seq": 3})
        return new, found, recent, old

    new, found, recent, old = _session(*served, body)
    seq = new.structured_content["seq"]
    texts = [f["text"] for f in found.structured_content["results"]]
    assert "Staging is on 5434" in texts and "Staging is on 5433" not in texts
    newest = recent.structured_content["memories"]
    assert newest[0]["seq"] == seq and all(m["seq"] != 3 for m in newest)
    assert old.structured_content["text"] == "Staging is on 5433"  # still in the chain


def test_every_tool_says_what_it_returns_and_returns_it(served: tuple[Cli, Path]) -> None:
    """Issue 26: every tool has an output schema that names its fields (not a bare
    object), and what each returns in a real session validates against it."""
    calls = [
        ("search", {"query": "pnpm"}),
        ("search", {"query": "pnpm", "compact": True, "limit": 1}),
        ("add", {"content": "The build runs on Node 22", "type": "fact"}),
        ("remember", {"text": "Runs the linter before each commit", "section": "Habits"}),
        ("review_queue", {}),
        ("context", {"query": "pnpm"}),
        ("list_files", {}),
        ("write_file", {"path": "facts/build.md", "content": "# Build\n\nNode 22\n"}),
        ("read_file", {"path": "facts/build.md"}),
        ("patch_file", {"path": "facts/build.md", "patches": [{"old": "22", "new": "24"}]}),
        ("append_file", {"path": "facts/build.md", "entry": "npm 10"}),
        ("rename_file", {"old": "facts/build.md", "new": "facts/node.md"}),
        ("delete_file", {"path": "facts/node.md"}),
        ("verify", {}),
        ("prove", {"seq": 1, "with_content": True}),
        ("get", {"seq": 1}),
        ("supersede", {"seq": 3, "content": "Staging is on 5434", "type": "fact"}),
        ("redact", {"seq": 3, "reason": "a wrong port"}),
        ("recent", {"limit": 2}),
    ]
    assert {name for name, _ in calls} == TOOLS

    async def body(s: ClientSession) -> Any:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        return tools, [(n, await s.call_tool(n, a)) for n, a in calls]

    tools, results = _session(*served, body)
    for name, tool in tools.items():
        schema = tool.output_schema
        assert schema and schema["type"] == "object" and schema["properties"], name
        assert "additionalProperties" not in schema, name
    for name, result in results:
        assert result.is_error is False, (name, _text(result))
        jsonschema.validate(result.structured_content, tools[name].output_schema)


def test_redact_erases_a_memory_and_refuses_what_it_must(served: tuple[Cli, Path]) -> None:
    """Issue 26: an agent that stored a secret by accident withdraws it; the chain
    still verifies, the text is gone from get and search; committed memories and
    unknown seqs are refused in one line that names the problem."""
    cli, here = served

    async def body(s: ClientSession) -> Any:
        added = await s.call_tool("add", {"content": "The vault code is 4417", "type": "fact"})
        seq = added.structured_content["seq"]
        gone = await s.call_tool("redact", {"seq": seq, "reason": "held a code"})
        again = await s.call_tool("redact", {"seq": seq, "reason": "again"})
        kept = await s.call_tool("add", {"content": "Never deploy on Fridays", "tier": "committed"})
        committed = await s.call_tool(
            "redact", {"seq": kept.structured_content["seq"], "reason": "x"}
        )
        missing = await s.call_tool("redact", {"seq": 999, "reason": "x"})
        no_reason = await s.call_tool("redact", {"seq": seq})
        shown = await s.call_tool("get", {"seq": seq})
        found = await s.call_tool("search", {"query": "vault code"})
        checked = await s.call_tool("verify", {"full": True})
        return seq, gone, again, committed, missing, no_reason, shown, found, checked

    seq, gone, again, committed, missing, no_reason, shown, found, checked = _session(
        cli, here, body
    )
    assert gone.structured_content["target"] == seq
    assert gone.structured_content["seq"] == seq + 1 and gone.structured_content["erased"]
    assert again.is_error and f"seq {seq} is already redacted" in _text(again)
    assert committed.is_error and "committed" in _text(committed)
    assert missing.is_error and "no entry with seq 999" in _text(missing)
    assert no_reason.is_error and "reason: Field required" in _text(no_reason)
    assert shown.structured_content["redacted_by"] == seq + 1
    assert "text" not in shown.structured_content
    assert all("4417" not in f["text"] for f in found.structured_content["results"])
    assert checked.structured_content["ok"] is True
    assert b"4417" not in b"".join(p.read_bytes() for p in (cli.root / "packs").rglob("*"))


BAD_ARGUMENTS = [
    ("search", {"query": ""}, "query"),
    ("search", {"query": "x", "type": "memo"}, "type"),
    ("search", {"query": "x", "since": "yesterday"}, "since"),
    ("add", {"content": "x", "tier": "comitted"}, "tier"),
    ("add", {"content": "x", "importance": 101}, "importance"),
    ("remember", {"text": "x", "scope": "team"}, "scope"),
    ("context", {"max_tokens": 5}, "max_tokens"),
    ("list_files", {"scope": 3}, "scope"),
    ("read_file", {"path": "MEMORY.md", "start": 0}, "start"),
    ("write_file", {"path": "a.md"}, "content"),
    ("patch_file", {"path": "a.md", "patches": []}, "patches"),
    ("append_file", {"entry": "x"}, "path"),
    ("delete_file", {}, "path"),
    ("rename_file", {"old": "a.md"}, "new"),
    ("verify", {"full": "all"}, "full"),
    ("prove", {"seq": -1}, "seq"),
    ("get", {"seq": "one"}, "seq"),
    ("supersede", {"seq": 3}, "content"),
    ("redact", {"seq": 0, "reason": "x"}, "seq"),
    ("recent", {"limit": 0}, "limit"),
    ("review_queue", {"scope": "user"}, "scope"),
]


def test_every_tool_names_the_argument_it_refuses(served: tuple[Cli, Path]) -> None:
    """Issue 26: a bad call of any tool is one line that names the argument."""
    assert {name for name, _, _ in BAD_ARGUMENTS} == TOOLS
    cli, here = served
    before = cli.chain.read_bytes()

    async def body(s: ClientSession) -> list[Any]:
        return [await s.call_tool(n, a) for n, a, _ in BAD_ARGUMENTS]

    for (name, args, arg), result in zip(BAD_ARGUMENTS, _session(cli, here, body), strict=True):
        text = _text(result)
        assert result.is_error and "\n" not in text, (name, args, text)
        assert arg in text, (name, args, text)
    assert before == cli.chain.read_bytes()
