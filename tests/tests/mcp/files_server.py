"""A stand-in for a user's own MCP server (like Claude-Code-Workflow's `ccw-tools`): a file tool
and its own `team_msg`, which appends to a local JSONL file as upstream's does. Served on stdio;
`huddle mcp --forward python3 files_server.py` fronts it in tests/tests/mcp/front.rs.
Environment: FILES_ROOT (where `read_file` reads and `team_msg` writes).
"""

import json
import os

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # the SDK's 1.x name
    from mcp.server.fastmcp import FastMCP as MCPServer

ROOT = os.environ["FILES_ROOT"]
server = MCPServer("files")


@server.tool()
def read_file(path: str) -> str:
    """Read a text file under the project root."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


@server.tool()
def team_msg(operation: str, session_id: str = "", team: str = "") -> str:
    """The local message log that huddle's team_msg replaces: it must never be reached."""
    with open(os.path.join(ROOT, "local-team-msg.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps({"operation": operation, "session": session_id or team}) + "\n")
    return "logged locally"


server.run()
