"""A small agent's memory, through the typed API (`from memory_chain import Memory`).

    python examples/agent.py DATA_DIR

It creates a chain in DATA_DIR (which must not hold one yet), remembers what
a person told it and what it decided, withdraws what it should not have
kept, recalls it for a new task, and checks
that what it recalled is provable: the chain verifies and the decision has
an inclusion proof. tests/test_api_types.py runs it and checks it with
mypy --strict.
"""

from __future__ import annotations

import sys

from memory_chain import Found, Memory


def recall(memory: Memory, task: str) -> list[Found]:
    """What the agent knows that bears on ``task``: provable memories first."""
    found = memory.search(task, limit=5)
    return sorted(found, key=lambda f: (f["kind"] != "provable", -f["score"]))


def main(data_dir: str) -> int:
    with Memory.init(data_dir, name="example-agent", project=False) as memory:
        memory.remember("Prefers short answers with one example", section="User Preferences")
        decided = memory.add(
            "We deploy the web app on Tuesdays, never on Fridays",
            type="decision",
            tier="committed",
        )
        memory.add("The staging database listens on port 5433", type="fact")
        slip = memory.add("Dana's home address is 12 Elm Street", type="fact")
        memory.redact(slip["seq"], "a person's address, not ours to keep")
        assert memory.get(slip["seq"])["redacted_by"] is not None
        for f in recall(memory, "when can we deploy the web app"):
            where = f"seq {f['seq']}" if f["kind"] == "provable" else f"{f.get('path')}"
            print(f"{f['kind']:9} {where}: {f['text']}")
        verified = memory.verify()
        proof = memory.prove(decided["seq"])
        size = proof["checkpoint"].splitlines()[1]  # a C2SP checkpoint: origin, size, root
        print(
            f"chain verified: {verified['ok']}; decision {decided['seq']} proved in a tree "
            f"of {size} entries"
        )
        return 0 if verified["ok"] else 1


if __name__ == "__main__":
    from memory_chain.chain.format.errors import MemoryChainError

    if len(sys.argv) != 2:
        sys.exit("usage: python examples/agent.py DATA_DIR")
    try:
        sys.exit(main(sys.argv[1]))
    except MemoryChainError as exc:  # one line, no traceback (a chain already there...)
        sys.exit(f"error: {exc}")
