"""Server messages of MCP tools inside model requests (api/relay/mcp_tools): what the model is told
when a call it made could not be run."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
MCP_TOOLS: dict[str, tuple[str, str]] = {
    "mcp_tool_arguments_invalid": ("The arguments of the call to {tool} are not a JSON object: nothing was run",
                                   "调用 {tool} 的参数不是 JSON 对象：未执行"),
}
