"""Server messages of the MCP gateway: the administration of servers, and the refusals and failures
the `/mcp` endpoint answers as JSON-RPC errors."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
MCP: dict[str, tuple[str, str]] = {
    # administration
    "mcp_field_invalid": ("Invalid MCP server field {field}: {problem}", "MCP 服务器字段 {field} 无效：{problem}"),
    "mcp_name_taken": ("An MCP server named {name} already exists", "已存在名为 {name} 的 MCP 服务器"),
    "mcp_server_not_found": ("MCP server not found", "未找到该 MCP 服务器"),
    "mcp_url_needs_credentials": (
        "Only root may send the stored credential to a new address: give the credential again with the new URL",
        "只有超级管理员可以把已保存的凭据发往新地址：请在修改 URL 时重新填写凭据"),
    "mcp_server_created": ("MCP server added", "MCP 服务器已添加"),
    "mcp_server_updated": ("MCP server updated", "MCP 服务器已更新"),
    "mcp_server_deleted": ("MCP server deleted", "MCP 服务器已删除"),
    "mcp_test_failed": ("Listing the tools of {name} failed: {reason}", "获取 {name} 的工具列表失败：{reason}"),
    "mcp_tools_invalid": ("mcp_tools must be a list of \"<server>\" or \"<server>__<tool>\" names ({problem})",
                          "mcp_tools 必须是 \"<服务器>\" 或 \"<服务器>__<工具>\" 名称的列表（{problem}）"),
    # the /mcp endpoint's refusals (api.mcp.access.AccessRefused codes)
    "mcp_refused_no_access": ("This API key may use no MCP server (its group {group} has none, or its MCP "
                              "allow-list names none of them)",
                              "此 API 密钥不能使用任何 MCP 服务器"
                              "（其分组 {group} 没有，或其 MCP 允许列表未包含任何一个）"),
    "mcp_refused_server_unknown": ("No MCP server named {server}", "没有名为 {server} 的 MCP 服务器"),
    "mcp_refused_server_not_in_group": ("The MCP server {server} is not offered to the group {group}",
                                        "MCP 服务器 {server} 未向分组 {group} 开放"),
    "mcp_refused_server_unavailable": ("The MCP server {server} is disabled or down",
                                       "MCP 服务器 {server} 已禁用或不可用"),
    "mcp_refused_server_not_in_key": ("This API key's MCP allow-list does not include the server {server}",
                                      "此 API 密钥的 MCP 允许列表不包含服务器 {server}"),
    "mcp_refused_server_mismatch": ("The MCP declaration {label} names the registered server {label}, but its URL "
                                    "is another registered server's: name one server, by its label or by its URL",
                                    "MCP 声明 {label} 的名称指向已注册的服务器 {label}，但其 URL 属于另一个已注册的"
                                    "服务器：请只指定一个服务器（按名称或按 URL）"),
    "mcp_refused_tool_not_offered": ("The MCP server {server} does not offer the tool {tool} through the gateway",
                                     "MCP 服务器 {server} 未通过网关提供工具 {tool}"),
    "mcp_refused_tool_not_in_key": ("This API key's MCP allow-list does not include the tool {tool} of {server}",
                                    "此 API 密钥的 MCP 允许列表不包含 {server} 的工具 {tool}"),
    "mcp_refused_tool_unknown": ("No tool named {tool}: tools on /mcp are named <server>__<tool>",
                                 "没有名为 {tool} 的工具：/mcp 上的工具名称为 <服务器>__<工具>"),
    "mcp_refused_prompt_unknown": ("No prompt named {prompt}", "没有名为 {prompt} 的提示"),
    "mcp_refused_resource_unknown": ("No MCP server of this key lists the resource {uri}",
                                     "此密钥可用的 MCP 服务器均未列出资源 {uri}"),
    # the /mcp endpoint's protocol answers
    "mcp_origin_forbidden": ("The Origin {origin} may not call this gateway's MCP endpoint",
                             "来源 {origin} 不允许调用本网关的 MCP 接口"),
    "mcp_session_required": ("An Mcp-Session-Id header is required: send initialize first",
                             "需要 Mcp-Session-Id 请求头：请先发送 initialize"),
    "mcp_session_unknown": ("Unknown or expired MCP session: initialize again", "MCP 会话不存在或已过期：请重新初始化"),
    "mcp_version_unsupported": ("Unsupported MCP protocol version {version}", "不支持的 MCP 协议版本 {version}"),
    "mcp_batch_unsupported": ("JSON-RPC batches are not supported: send one message per request",
                              "不支持 JSON-RPC 批量请求：每个请求发送一条消息"),
    "mcp_invalid_message": ("Not a JSON-RPC 2.0 message", "不是 JSON-RPC 2.0 消息"),
    "mcp_parse_error": ("The body is not JSON", "请求体不是 JSON"),
    "mcp_method_unknown": ("Method not found: {method}", "方法不存在：{method}"),
    "mcp_params_invalid": ("Invalid params: {problem}", "参数无效：{problem}"),
    "mcp_upstream_failed": ("The MCP server {server} failed: {reason}", "MCP 服务器 {server} 出错：{reason}"),
    "mcp_cancelled": ("The request was cancelled", "请求已取消"),
    "mcp_get_unsupported": ("This endpoint sends no server-initiated stream: use POST",
                            "此接口不提供服务器推送流：请使用 POST"),
}
