"""MCP tools inside model requests: a Responses `mcp` tool or an Anthropic `mcp_servers` entry that
names a server registered in this gateway is served by the gateway itself, for any channel.

    declared.py  which of the client's MCP declarations name a registered server (taken out of the body)
    offer.py     the key's grants on them (api.mcp.access, refused by name), their tools as functions
    running.py   one call the model made, billed like a call of `/mcp` (api.relay.mcp.tool_call.run_admitted)
    rounds.py    the rounds: each one a whole relay request (api.relay.lifecycle.serve), bounded by McpMaxRounds
    items.py     the answer in the client's format: Responses `mcp_list_tools` / `mcp_call` items,
                 Anthropic `mcp_tool_use` / `mcp_tool_result` blocks, before the answer's own
    streams.py   a streamed request's answer: the rounds run whole, the answer then sent as the client's events
"""
