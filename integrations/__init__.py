"""The agents' doors: hooks (Claude Code, OpenClaw), the MCP server, schedules, doctor.

Imports: memory_chain.capture, .workspace, .index, .chain (never cli).
``Memory`` (api.py) is the typed facade they all use in-process.
"""

from .api import Memory

__all__ = ["Memory"]
