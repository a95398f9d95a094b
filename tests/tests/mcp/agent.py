"""One agent's MCP session through the official Python SDK, shared by the MCP test scripts."""

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


class Agent:
    """An agent authenticated with its bearer token; `open` it inside an AsyncExitStack."""

    def __init__(self, url, token):
        self.url = url
        self.token = token

    async def open(self, stack):
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=httpx2.Timeout(60.0),
        )
        await stack.enter_async_context(http)
        streams = await stack.enter_async_context(
            streamable_http_client(self.url, http_client=http)
        )
        self.session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
        self.init = await self.session.initialize()
        return self

    async def call(self, tool, args, **options):
        """A successful call's structured content; a tool error raises."""
        result = await self.session.call_tool(tool, args, **options)
        if result.is_error:
            raise AssertionError(f"{tool} failed: {result.content}")
        return result.structured_content

    async def refused(self, tool, args):
        """A call that must come back as a tool error: its API error body."""
        result = await self.session.call_tool(tool, args)
        assert result.is_error, f"{tool} should have been refused: {result}"
        text = result.content[0].text
        error = result.structured_content["error"]
        assert text.startswith(error["code"] + ":"), text
        return error
