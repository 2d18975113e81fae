"""Server messages of the relay (/v1, tasks, the playground): API keys, routing, limits, the upstream."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
RELAY: dict[str, tuple[str, str]] = {
    "relay_no_key": (
        "No API key provided (use Authorization: Bearer sk-...)", "未提供令牌（请使用 Authorization: Bearer sk-...）"),
    "relay_invalid_key": ("Invalid API key", "无效的令牌"),
    "relay_key_disabled": ("This API key has been disabled", "该令牌已被禁用"),
    "relay_key_expired": ("This API key has expired", "该令牌已过期"),
    "relay_key_exhausted": ("The quota of this API key is used up", "该令牌额度已用尽"),
    "relay_key_insufficient": (
        "The remaining quota of this API key ({remain}) is below this request's pre-charge ({pre})",
        "令牌剩余额度（{remain}）不足以预扣本次请求（{pre}）"),
    "relay_user_banned": ("This user has been banned", "用户已被封禁"),
    "relay_user_insufficient": (
        "Your quota ({remain}) is below this request's pre-charge ({pre})",
        "用户额度（{remain}）不足以预扣本次请求（{pre}）"),
    "relay_user_in_flight": (
        "Your requests still running may cost up to {held} more than was reserved for them, which your quota "
        "({remain}) less this request's pre-charge ({pre}) does not cover: retry when they end, or set max_tokens",
        "您仍在进行中的请求最多可能再消耗 {held}，用户额度（{remain}）扣除本次预扣（{pre}）后不足以覆盖："
        "请待其结束后重试，或设置 max_tokens"),
    "relay_key_in_flight": (
        "This API key's requests still running may cost up to {held} more than was reserved for them, which its "
        "remaining quota ({remain}) less this request's pre-charge ({pre}) does not cover: retry when they end, "
        "or set max_tokens",
        "该令牌仍在进行中的请求最多可能再消耗 {held}，令牌剩余额度（{remain}）扣除本次预扣（{pre}）后不足以覆盖："
        "请待其结束后重试，或设置 max_tokens"),
    "relay_pin_forbidden": ("Only administrators may pin a channel", "普通用户不支持指定渠道"),
    "relay_pinned_unavailable": ("Channel {id} does not exist or is disabled", "渠道 {id} 不存在或已被禁用"),
    "relay_model_forbidden": ("This API key may not use model {model}", "该令牌无权访问模型 {model}"),
    "relay_ip_forbidden": ("This API key may not be used from {ip}", "该令牌不允许从 IP {ip} 访问"),
    "relay_group_disabled": ("Group {group} of this API key is not usable", "令牌分组 {group} 已被禁用"),
    "relay_group_deprecated": ("Group {group} has been deprecated", "分组 {group} 已被弃用"),
    "relay_no_channel": (
        "No available channel for model {model} in group {group}", "当前分组 {group} 下对于模型 {model} 无可用渠道"),
    "relay_model_required": ("The request names no model", "请求未指定模型"),
    "relay_price_missing": (
        "Model {model} has no price configured; ask the administrator to set its ratio or price",
        "模型 {model} 倍率或价格未配置，请联系管理员设置"),
    "relay_rate_limited": (
        "Rate limit reached: {scope} ({limit}); retry in {seconds} s",
        "请求过于频繁：{scope}（上限 {limit}），请 {seconds} 秒后重试"),
    "relay_sensitive": ("The request contains sensitive words", "请求中包含敏感词"),
    "relay_invalid_body": ("The request body is not a valid JSON object", "请求体不是合法的 JSON 对象"),
    "relay_invalid_param": ("Invalid value for '{param}': {problem}", "参数 '{param}' 的值无效：{problem}"),
    "relay_invalid_field": ("Invalid field {field}", "字段 {field} 无效"),
    "relay_invalid_form": (
        "The request must be multipart/form-data with a file part", "请求必须是包含 file 的 multipart/form-data"),
    "relay_upstream_busy": (
        "The upstream of this group is saturated, try again later", "当前分组上游负载已饱和，请稍后再试"),
    "relay_not_implemented": ("API not implemented", "API 未实现"),
    "service_unavailable": (
        "The service is briefly unavailable: try again in a few seconds", "服务暂时不可用，请稍后重试"),
    "relay_task_unreachable": ("The task service could not be reached", "无法连接任务服务"),
    "relay_task_refused": ("The task service did not take the task: {reason}", "任务服务未接受该任务：{reason}"),
    "relay_task_not_found": ("Task {id} not found", "任务 {id} 不存在"),
    "relay_task_not_success": (
        "Task {id} has not succeeded (status {task_status}): actions apply to finished tasks",
        "任务 {id} 尚未成功（状态 {task_status}），只能对已完成的任务执行操作"),
    "relay_task_channel_gone": (
        "The channel that ran task {id} is no longer available", "执行任务 {id} 的渠道已不可用"),
    "relay_task_invalid": ("Invalid request: {reason}", "请求无效：{reason}"),
    "relay_task_notify_forbidden": (
        "This callback is not signed for this gateway", "该回调未经本网关签名"),
    "relay_task_no_image": ("Task {id} has no image", "任务 {id} 没有图片"),
    "relay_response_not_stored": (
        "Responses are not stored by this gateway (every answer is store: false): there is nothing to fetch",
        "本网关不保存响应（所有回答均为 store: false），无可获取的内容"),
    "relay_unsupported_mode": (
        "This endpoint is not supported by channel type {type}", "渠道类型 {type} 不支持该接口"),
    "relay_invalid_url": ("Invalid URL ({method} {path})", "无效的 URL（{method} {path}）"),
    "relay_model_not_found": (
        "The model {model} does not exist or you do not have access to it", "模型 {model} 不存在或无权访问"),
    "relay_internal": ("Internal error of the gateway", "网关内部错误"),
    "relay_upstream_failed": ("The upstream request failed: {error}", "请求上游失败：{error}"),
    "relay_upstream_timeout": ("The upstream did not answer within {seconds} s", "上游在 {seconds} 秒内无响应"),
    "relay_stream_interrupted": ("The upstream stream was interrupted: {reason}", "上游流式响应中断：{reason}"),
    "relay_playground_session": (
        "The playground needs a logged-in session, not an access token", "操练场需要登录会话，不支持访问令牌"),
    "relay_metrics_forbidden": ("Metrics are not available to this client", "无权访问监控指标"),
    "relay_realtime_not_websocket": (
        "This endpoint takes a WebSocket connection (GET with Upgrade: websocket)",
        "该接口仅接受 WebSocket 连接（GET 且 Upgrade: websocket）"),
    "relay_realtime_too_many": (
        "This API key already has {limit} open Realtime sessions", "该令牌已有 {limit} 个进行中的 Realtime 会话"),
    "relay_realtime_user_too_many": (
        "Your API keys already have {limit} open Realtime sessions in all",
        "您的令牌共有 {limit} 个进行中的 Realtime 会话，已达上限"),
    "relay_realtime_secrets_key": (
        "This API key already has {limit} live Realtime client secrets: wait for one to expire",
        "该令牌已有 {limit} 个未过期的 Realtime 临时密钥，请等待其过期"),
    "relay_realtime_secrets_user": (
        "Your API keys already have {limit} live Realtime client secrets in all: wait for one to expire",
        "您的令牌共有 {limit} 个未过期的 Realtime 临时密钥，已达上限，请等待其过期"),
    "relay_realtime_upstream": (
        "The upstream did not open the Realtime session ({reason})", "上游未能建立 Realtime 会话（{reason}）"),
    "relay_realtime_idle": (
        "The Realtime session was closed after {seconds} s without activity", "Realtime 会话空闲 {seconds} 秒，已关闭"),
    "relay_realtime_expired": (
        "The Realtime session reached its limit of {seconds} s", "Realtime 会话已达到 {seconds} 秒的时长上限"),
    "relay_realtime_shutdown": (
        "The server is restarting: open a new session to continue", "服务器正在重启，请重新建立会话"),
    "relay_realtime_quota": (
        "The Realtime session is closed: {reason}", "Realtime 会话已关闭：{reason}"),
    "relay_realtime_secret_model": (
        "This client secret opens sessions of {model} only", "该临时密钥只能建立 {model} 的会话"),
    "relay_realtime_model_fixed": (
        "The model of a Realtime session is the one it was opened with ({model})",
        "Realtime 会话的模型在建立时确定（{model}），不能更改"),
}
