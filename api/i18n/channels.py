"""Server messages of channel administration: the form, keys, tests, balances, multi-key channels,
tags."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
CHANNELS: dict[str, tuple[str, str]] = {
    "channel_name_key_required": ("Please fill in the channel name and key", "请填写渠道名称和渠道密钥！"),
    "channel_models_required": ("Please select at least one model", "请至少选择一个模型！"),
    "channel_model_mapping_invalid": ("Model mapping must be a valid JSON object", "模型映射必须是合法的 JSON 格式！"),
    "channel_status_code_mapping_invalid": (
        "Status code mapping must be a valid JSON object", "状态码复写必须是合法的 JSON 格式！"),
    "channel_type_invalid": ("Unknown channel type: {type}", "未知的渠道类型：{type}"),
    "channel_type_retired": ("Channel type {type} is retired: {reason}", "渠道类型 {type} 已停用：{reason_zh}"),
    "channel_library_id_required": (
        "An AI Proxy knowledge-base channel needs the knowledge base ID", "知识库渠道需要填写知识库 ID"),
    "channel_cloudflare_account_required": (
        "A Cloudflare channel needs its account ID (letters and digits) in the account ID field",
        "Cloudflare 渠道需要在 Account ID 字段填写账户 ID（字母和数字）"),
    "channel_base_url_required": (
        "Channel type {type} has no default API address: fill in the base URL",
        "渠道类型 {type} 没有默认的接口地址，请填写代理地址（Base URL）"),
    "channel_key_single": (
        "The key must be one line per channel (line {line})", "密钥必须每行一个（第 {line} 行）"),
    "channel_key_bedrock": (
        "The key of an AWS Bedrock channel is AccessKeyId|SecretAccessKey|Region (e.g. AKIA…|wJal…|us-east-1) or "
        "BedrockApiKey|Region, a Bedrock API key starting with ABSK or bedrock-api-key- (e.g. ABSK…|us-east-1) "
        "(line {line})",
        "AWS Bedrock 渠道的密钥格式为 AccessKeyId|SecretAccessKey|Region（例如 AKIA…|wJal…|us-east-1），"
        "或 BedrockApiKey|Region，即以 ABSK 或 bedrock-api-key- 开头的 Bedrock API 密钥（例如 ABSK…|us-east-1）"
        "（第 {line} 行）"),
    "channel_key_vertex_json": (
        "The key of a Vertex AI channel is a service-account JSON key (the whole file) or a Vertex AI API key (one "
        "line): this JSON is not a service-account key ({problem}) (line {line})",
        "Vertex AI 渠道的密钥是服务账号 JSON 密钥（整个文件）或一行 Vertex AI API Key："
        "这段 JSON 不是服务账号密钥（{problem}）（第 {line} 行）"),
    "channel_key_vertex_api_key": (
        "The key of a Vertex AI channel is a service-account JSON key (the whole file) or a Vertex AI API key "
        "on one line without spaces (AIza… or AQ.…) (line {line})",
        "Vertex AI 渠道的密钥是服务账号 JSON 密钥（整个文件）或一行不含空格的 Vertex AI API Key（AIza… 或 AQ.…）"
        "（第 {line} 行）"),
    "channel_key_vertex_token": (
        "This is an OAuth access token (ya29.…), which expires within an hour: use a service-account JSON key or a "
        "Vertex AI API key (line {line})",
        "这是 OAuth 访问令牌（ya29.…），一小时内就会过期："
        "请使用服务账号 JSON 密钥或 Vertex AI API Key（第 {line} 行）"),
    "channel_vertex_region_table": (
        "The Vertex AI region field is empty (us-central1) or a JSON object of model to region, with \"default\" "
        "for the other models; a region is global or like us-central1",
        "Vertex AI 部署地区为空（即 us-central1），或为“模型 → 地区”的 JSON 对象（\"default\" 表示其他模型）；"
        "地区为 global 或形如 us-central1"),
    "channel_key_baidu": (
        "The key of a Baidu channel is APIKey|SecretKey (line {line})",
        "百度渠道的密钥格式为 APIKey|SecretKey（第 {line} 行）"),
    "channel_key_kling": (
        "The key of a Kling channel is AccessKey|SecretKey (line {line})",
        "可灵渠道的密钥格式为 AccessKey|SecretKey（第 {line} 行）"),
    "channel_key_jimeng": (
        "The key of a Jimeng channel is the Volcengine AccessKey|SecretKey (line {line})",
        "即梦渠道的密钥格式为火山引擎 AccessKey|SecretKey（第 {line} 行）"),
    "channel_key_spark": (
        "The key of an iFlytek Spark channel is the APIPassword of its HTTP API (or APIKey:APISecret), or "
        "APPID|APISecret|APIKey for its WebSocket API (line {line})",
        "讯飞星火渠道的密钥为 HTTP 接口的 APIPassword（或 APIKey:APISecret），或 WebSocket 接口的 "
        "APPID|APISecret|APIKey（第 {line} 行）"),
    "channel_spark_other_invalid": (
        "The Spark version must be empty or one of v1.1, v3.1, v3.1-128k, v3.5, v3.5-32k, v4.0",
        "星火版本须留空，或为以下之一：v1.1、v3.1、v3.1-128k、v3.5、v3.5-32k、v4.0"),
    "channel_key_zhipu_v4": (
        "The key of a Zhipu GLM channel is the API key shown in the Zhipu (bigmodel.cn) or Z.ai console, "
        "without spaces (line {line})",
        "智谱 GLM 渠道的密钥为智谱开放平台（bigmodel.cn）或 Z.ai 控制台中的 API Key，不含空格（第 {line} 行）"),
    "channel_key_hunyuan": (
        "The key of a Tencent Hunyuan channel is an API key from the Hunyuan console (OpenAI-compatible "
        "endpoint) or AppId|SecretId|SecretKey (TencentCloud API 3.0) (line {line})",
        "腾讯混元渠道的密钥为混元控制台的 API Key（OpenAI 兼容接口），或 AppId|SecretId|SecretKey"
        "（腾讯云 API 3.0）（第 {line} 行）"),
    "channel_key_qianfan": (
        "The key of a Baidu Qianfan V2 channel is an API Key as the Qianfan console shows it, bce-v3/ALTAK-…/… "
        "(line {line})",
        "百度千帆 V2 渠道的密钥为千帆控制台中的 API Key，格式为 bce-v3/ALTAK-…/…（第 {line} 行）"),
    "channel_azure_api_version_invalid": (
        "The API version of an Azure OpenAI channel is left empty for the v1 API, or is v1, preview or a dated "
        "version such as 2024-10-21 or 2025-04-01-preview",
        "Azure OpenAI 渠道的 API 版本留空即使用 v1 API；也可填写 v1、preview 或带日期的版本，如 "
        "2024-10-21、2025-04-01-preview"),
    "channel_other_qianfan_appid": (
        "The app ID of a Baidu Qianfan V2 channel is optional; when set it looks like app-xxxx (letters, digits, - "
        "and _)",
        "百度千帆 V2 渠道的应用 ID 可不填；填写时形如 app-xxxx（字母、数字、- 和 _）"),
    "channel_status_invalid": (
        "Channel status must be 1 (enabled), 2 (disabled) or 3 (automatically disabled)",
        "渠道状态只能是 1（启用）、2（手动禁用）或 3（自动禁用）"),
    "channel_too_many_keys": ("At most {max} keys can be added at once", "一次最多添加 {max} 个密钥"),
    "channel_not_found": ("Channel not found, refresh the page", "渠道不存在，请刷新页面后重试"),
    "channel_ids_required": ("Please select the channels to delete first", "请先选择要删除的通道！"),
    "channel_created": ("Channel created", "渠道创建成功！"),
    "channel_updated": ("Channel updated", "渠道更新成功！"),
    "channel_copied": ("Channel copied", "渠道复制成功！"),
    "channel_deleted_disabled": (
        "Deleted all disabled channels ({count} in total)", "已删除所有禁用渠道，共计 {count} 个"),
    "channel_deleted_count": ("Deleted {count} channels", "已删除 {count} 个通道！"),
    "channel_fixed_count": ("Fixed {count} channels", "已修复 {count} 个通道！"),
    "channel_test_success": (
        "Channel {name} tested successfully in {time} s", "通道 {name} 测试成功，耗时 {time} 秒。"),
    "channel_test_unsupported": (
        "Testing is not supported for this channel type: {type}", "该渠道类型不支持测试：{type}"),
    "channel_test_busy": (
        "A test of this channel is already running", "该渠道的测试已在运行中"),
    "channel_test_all_running": ("A test of all channels is already running", "测试已在运行中"),
    "channel_test_all_started": (
        "Testing all channels has started; refresh later to see the results", "通道测试已开始，请稍后刷新页面查看结果"),
    "channel_test_timeout": ("No answer within {seconds} s", "{seconds} 秒内无响应"),
    "channel_test_no_usage": (
        "The upstream answered without choices or usage", "上游返回的结果中没有 choices 或 usage"),
    "channel_test_request_failed": ("Request to the upstream failed: {error}", "请求上游失败：{error}"),
    "channel_balance_unsupported": (
        "Balance queries are not supported for this channel type ({type})", "该渠道类型（{type}）不支持查询余额"),
    "channel_balance_failed": ("Balance query failed: {error}", "查询余额失败：{error}"),
    "channel_balance_all_started": (
        "Updating the balance of all enabled channels has started", "已开始更新所有已启用通道的余额"),
    "channel_balance_all_running": (
        "A balance update of all channels is already running", "余额更新已在运行中"),
    "channel_fetch_models_unsupported": ("Only the OpenAI interface format is supported", "仅支持 OpenAI 接口格式"),
    "channel_key_missing": ("Please fill in the key", "请填写密钥"),
    "channel_fetch_models_failed": ("Failed to get the model list: {error}", "获取模型列表失败：{error}"),
    "channel_multi_key_mode_invalid": (
        "The key mode of a multi-key channel is random, polling (round-robin) or affinity, not {mode}",
        "多密钥模式只能是 random（随机）、polling（轮询）或 affinity（会话粘性），而不是 {mode}"),
    "channel_key_mode_invalid": (
        "key_mode is append (add the keys) or replace (replace the key list), not {mode}",
        "key_mode 只能是 append（追加密钥）或 replace（覆盖密钥），而不是 {mode}"),
    "channel_keys_too_many": ("A channel holds at most {max} keys", "一个渠道最多 {max} 个密钥"),
    "channel_keys_mixed": (
        "The keys of a multi-key channel are either all JSON documents (a JSON array of service-account keys) "
        "or all one-line keys, not both",
        "多密钥渠道的密钥要么全部是 JSON 文档（服务账号密钥的 JSON 数组），要么全部是单行密钥，不能混用"),
    "channel_multi_key_off_refused": (
        "This channel holds {count} keys: delete all but one before turning multi-key off",
        "该渠道有 {count} 个密钥，请先删除到只剩一个再关闭多密钥模式"),
    "channel_address_needs_key": (
        "Only root may send this channel's stored keys to a new address: fill in the key again with the new "
        "base URL (for a multi-key channel, every key, replacing the list rather than appending)",
        "只有超级管理员可以把渠道已保存的密钥发往新的地址：修改 Base URL 时请重新填写密钥"
        "（多密钥渠道需填写全部密钥并覆盖原列表，而不是追加）"),
    "channel_tag_too_long": ("A tag is at most {max} characters long", "标签最长 {max} 个字符"),
    "channel_cache_per_key_invalid": (
        "cache_per_key is 1 (the upstream caches prompts per key) or 0 (per channel)",
        "cache_per_key 只能是 1（上游按密钥缓存提示词）或 0（按渠道缓存）"),
    "channel_max_inflight_invalid": (
        "max_inflight is a whole number of requests at once, 0 for no limit",
        "max_inflight 为同时进行的请求数（整数），0 表示不限"),
    "channel_not_multi_key": ("This channel is not a multi-key channel", "该渠道不是多密钥模式"),
    "channel_key_action_invalid": ("Unsupported action: {action}", "不支持的操作：{action}"),
    "channel_key_index_missing": (
        "Name the key: its fingerprint or its key_index", "未指定要操作的密钥（fingerprint 或 key_index）"),
    "channel_key_not_found": (
        "This channel has no such key (its key list may have changed: refresh)",
        "该渠道没有这个密钥（密钥列表可能已变化，请刷新）"),
    "channel_key_last": (
        "A channel keeps at least one key: the last one cannot be deleted", "不能删除最后一个密钥"),
    "channel_keys_none_to_disable": ("No key to disable", "没有可禁用的密钥"),
    "channel_keys_no_auto_disabled": (
        "No automatically disabled key to delete", "没有需要删除的自动禁用密钥"),
    "channel_keys_required": ("Please fill in the keys to add", "请填写要添加的密钥"),
    "channel_key_enabled": ("Key enabled", "密钥已启用"),
    "channel_key_disabled": ("Key disabled", "密钥已禁用"),
    "channel_keys_enabled": ("Enabled {count} keys", "已启用 {count} 个密钥"),
    "channel_keys_disabled": ("Disabled {count} keys", "已禁用 {count} 个密钥"),
    "channel_key_deleted": ("Key deleted", "密钥已删除"),
    "channel_keys_deleted_auto": (
        "Deleted {count} automatically disabled keys", "已删除 {count} 个自动禁用的密钥"),
    "channel_keys_added": (
        "Added {count} keys ({skipped} already in the channel)", "已添加 {count} 个密钥（{skipped} 个已存在）"),
    "channel_tag_required": ("Please give the tag", "标签不能为空"),
    "channel_tag_ids_required": ("Please select the channels first", "请先选择渠道"),
    "channel_tag_disabled": ("Disabled {count} channels of tag {tag}", "已禁用标签 {tag} 下的 {count} 个渠道"),
    "channel_tag_enabled": ("Enabled {count} channels of tag {tag}", "已启用标签 {tag} 下的 {count} 个渠道"),
    "channel_tag_updated": ("Updated {count} channels", "已更新 {count} 个渠道"),
    "channel_tag_set": ("Set the tag of {count} channels", "已设置 {count} 个渠道的标签"),
}
