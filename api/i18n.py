"""Server messages in English and Chinese; the language follows the request's Accept-Language."""
from __future__ import annotations

from aiohttp import web

# key: (English, Chinese). Parameters use str.format names.
MESSAGES: dict[str, tuple[str, str]] = {
    "not_logged_in": ("Not logged in or login expired, please log in again", "未登录或登录已过期，请重新登录"),
    "user_header_mismatch": (
        "Not authorised: refresh the page or clear the cache and try again",
        "无权进行此操作，请刷新页面或清空缓存后重试",
    ),
    "forbidden": ("You are not allowed to do this", "无权进行此操作，权限不足"),
    "user_banned": ("This user has been banned", "用户已被封禁"),
    "too_many_requests": ("Too many requests, try again later", "请求过于频繁，请稍后再试"),
    "not_found": ("Not found", "未找到"),
    "internal_error": ("Internal server error, contact the admin", "服务器内部错误，请联系管理员"),
    "invalid_json_body": ("The request body is not valid JSON", "无效的请求体（不是合法的 JSON）"),
    "invalid_param": ("Invalid parameter: {name}", "无效的参数：{name}"),
    "login_backoff": ("Too many wrong passwords for this account: try again in {seconds} s",
                      "该账户密码错误次数过多，请 {seconds} 秒后重试"),
    "invalid_value": ("A value in the request is out of range or holds characters that cannot be stored",
                      "请求中的某个值超出范围或包含无法保存的字符"),
    "invalid_nul": ("The request holds a NUL character, which no field may contain", "请求包含 NUL 字符，任何字段都不能包含"),
    # -- tokens, redemption codes, wallet, payments, logs, dashboard --
    "token_not_found": ("Token not found", "令牌不存在"),
    "token_name_required": ("Please enter a token name", "请输入令牌名称"),
    "token_name_too_long": ("The token name is too long (at most {max} characters)", "令牌名称过长（最多 {max} 个字符）"),
    "token_quota_invalid": (
        "The remaining quota must be an integer of at least 0 (or choose unlimited quota)",
        "剩余额度必须是不小于 0 的整数（或设为无限额度）"),
    "token_expiry_invalid": (
        "The expiry must be -1 (never expires) or a time in the future", "过期时间必须为 -1（永不过期）或未来的时间"),
    "token_invalid_ip": ("Invalid IP address or network in the allowed IPs: {ip}", "IP 白名单中的地址无效：{ip}"),
    "token_allow_ips_too_many": ("At most {max} allowed IP entries", "IP 白名单最多 {max} 条"),
    "token_group_not_selectable": ("The group {group} is not selectable", "分组 {group} 不可选"),
    "token_status_invalid": ("A token can only be enabled (1) or disabled (2)", "令牌状态只能设为启用（1）或禁用（2）"),
    "token_expired_cannot_enable": (
        "The token has expired and cannot be enabled: change its expiry first, or make it never expire",
        "令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期"),
    "token_exhausted_cannot_enable": (
        "The token's quota is used up and it cannot be enabled: raise its remaining quota first, or make it unlimited",
        "令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度"),
    "redemption_not_found": ("Redemption code not found", "兑换码不存在"),
    "redemption_name_required": ("Please enter a name for the codes", "请输入兑换码名称"),
    "redemption_name_length": ("The name must be 1 to {max} characters long", "兑换码名称长度必须在 1-{max} 之间"),
    "redemption_quota_invalid": ("The quota must be a positive integer", "额度必须是正整数"),
    "redemption_count_invalid": ("The count must be a positive integer", "数量必须是正整数"),
    "redemption_count_too_many": ("At most {max} codes can be created at once", "一次最多生成 {max} 个兑换码"),
    "redemption_status_invalid": (
        "A code can only be set unused (1) or disabled (2)", "兑换码状态只能设为未使用（1）或已禁用（2）"),
    "redemption_used_locked": ("This code has been used and can no longer be changed", "该兑换码已被使用，无法修改"),
    "redemption_not_unused": ("Only unused codes can be edited", "只能编辑未使用的兑换码"),
    "redeem_key_required": ("Please enter a redemption code!", "请输入兑换码！"),
    "redeem_key_invalid": ("Invalid redemption code", "无效的兑换码"),
    "redeem_key_disabled": ("This redemption code has been disabled", "该兑换码已被禁用"),
    "redeem_key_used": ("This redemption code has already been used", "该兑换码已被使用"),
    "payment_disabled": ("The administrator has not enabled online top-up!", "管理员未开启在线充值！"),
    "payment_not_configured": ("Online payment is not configured", "在线支付尚未配置"),
    "payment_method_unsupported": ("Unsupported payment method", "不支持的支付方式"),
    "payment_create_failed": ("Could not start the payment, try again later", "拉起支付失败，请稍后重试"),
    "topup_amount_integer": ("The top-up amount must be an integer!", "充值数量必须是整数！"),
    "topup_amount_min": ("The top-up amount cannot be less than {min}", "充值数量不能小于{min}"),
    "topup_amount_max": ("The top-up amount cannot be more than {max}", "充值数量不能大于{max}"),
    "topup_pay_too_low": ("The amount to pay is too low", "充值金额过低"),
    "stripe_signature_invalid": ("Invalid Stripe signature", "Stripe 签名无效"),
    "log_target_time_required": ("Please choose the log record time", "请选择日志记录时间"),
    "data_range_invalid": ("The start time must not be after the end time", "开始时间不能晚于结束时间"),
    "data_range_too_long": ("The time span cannot exceed {days} days", "时间跨度不能超过 {days} 天"),
    "login_fields_required": ("Please enter username and password", "请输入用户名和密码"),
    "login_failed": ("Wrong username or password, or the user has been banned", "用户名或密码错误，或用户已被封禁"),
    "password_login_disabled": (
        "The administrator has turned off password login", "管理员关闭了密码登录"),
    # -- accounts, users and self-service ---------------------------------------------
    "user_deleted": ("This account has been deleted", "该用户已注销"),
    "registration_disabled": (
        "The administrator has turned off new registrations", "管理员关闭了新用户注册"),
    "password_register_disabled": (
        "The administrator has turned off registration with a password; register with a third-party login",
        "管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册"),
    "username_too_long": ("The username must be at most {max} characters", "用户名长度不能超过 {max} 个字符"),
    "username_invalid": (
        "The username may not contain spaces or control characters", "用户名不能包含空格或控制字符"),
    "display_name_too_long": ("The display name must be at most {max} characters", "显示名称长度不能超过 {max} 个字符"),
    "password_too_short": ("Password length must not be below {min}", "密码长度不得小于 {min} 位"),
    "password_too_long": ("Password length must not exceed {max}", "密码长度不得超过 {max} 位"),
    "passwords_differ": ("The two passwords differ", "两次输入的密码不一致"),
    "username_taken": ("The username is already taken", "用户名已存在"),
    "email_required": ("Please enter the e-mail address", "请输入邮箱地址"),
    "email_invalid": ("Invalid e-mail address", "无效的邮箱地址"),
    "email_domain_not_allowed": (
        "The administrator only allows e-mail addresses of these domains: {domains}",
        "管理员启用了邮箱域名白名单，仅允许以下域名的邮箱：{domains}"),
    "email_alias_not_allowed": (
        "The administrator does not allow e-mail aliases (an address with + before the @)",
        "管理员启用了邮箱地址别名限制，不允许使用带 + 的邮箱地址"),
    "email_taken": ("The e-mail address is already in use", "邮箱地址已被占用"),
    "verification_code_required": ("Please enter the verification code", "请输入验证码"),
    "verification_code_invalid": ("The verification code is wrong or has expired", "验证码错误或已过期"),
    "mail_cooldown": (
        "A mail was sent less than {seconds} seconds ago, try again later", "请勿频繁发送，请 {seconds} 秒后再试"),
    "smtp_not_configured": (
        "The administrator has not configured SMTP, no mail can be sent", "管理员未配置 SMTP，无法发送邮件"),
    "server_address_required": (
        "The server address is not set: root must set it (Settings, System) before reset mails can be sent",
        "尚未设置服务器地址：请 root 在系统设置中填写后再发送重置邮件"),
    "reset_link_invalid": ("The reset link is invalid or has expired", "重置链接非法或已过期"),
    "turnstile_empty": (
        "Please retry in a few seconds, Turnstile is checking", "Turnstile 正在检查，请稍后重试"),
    "turnstile_failed": ("Turnstile verification failed, refresh and try again", "Turnstile 校验失败，请刷新重试"),
    "turnstile_unavailable": (
        "Turnstile verification is unreachable, try again later", "无法连接 Turnstile 校验服务，请稍后重试"),
    "original_password_required": ("Please enter your current password", "请输入原密码"),
    "original_password_wrong": ("The current password is wrong", "原密码错误"),
    "self_deletion_disabled": (
        "The administrator does not allow deleting your own account", "管理员未开启用户自助注销"),
    "root_cannot_delete_self": ("The super admin account cannot be deleted", "不能注销超级管理员账户"),
    "aff_transfer_min": ("Transfer amount minimum is {min}", "转移额度最小为 {min}"),
    "aff_insufficient": ("Not enough invite quota", "邀请额度不足"),
    "quota_invalid": ("The quota must be an integer", "额度必须是整数"),
    "group_unknown": ("Unknown group: {group}", "分组不存在：{group}"),
    "user_not_found": ("User not found", "用户不存在"),
    "user_same_or_higher_role": (
        "You cannot manage a user of the same or a higher role", "无权操作同级或更高级别的用户"),
    "only_root_promotes": (
        "Only the super admin can promote a user to admin", "只有超级管理员可以将用户提升为管理员"),
    "already_admin": ("The user is already an admin", "该用户已经是管理员"),
    "already_common": ("The user is already an ordinary user", "该用户已经是普通用户"),
    "root_cannot_demote": ("The super admin cannot be demoted", "无法降级超级管理员"),
    "root_cannot_disable": ("The super admin cannot be disabled", "无法禁用超级管理员"),
    "root_cannot_delete": ("The super admin cannot be deleted", "无法删除超级管理员"),
    "unknown_action": ("Unknown action: {action}", "未知操作：{action}"),
    "oauth_disabled": (
        "The administrator has not enabled login and registration with {provider}",
        "管理员未开启通过 {provider} 登录以及注册"),
    "oauth_state_invalid": (
        "The state parameter is wrong or has expired, start the login again", "state 参数错误或已过期，请重新登录"),
    "oauth_provider_error": ("Logging in with {provider} failed, try again", "{provider} 登录失败，请重试"),
    "oauth_identity_bound": (
        "This {provider} account is already bound to another user", "该 {provider} 账户已被其他用户绑定"),
    "oauth_identity_busy": (
        "This account is being processed by another request, try again", "该账户正在处理中，请稍后重试"),
    "linuxdo_level_low": (
        "Your LINUX DO trust level {level} is below the required {min}",
        "您的 LINUX DO 信任等级 {level} 未达到要求的 {min}"),
    "telegram_invalid": ("The Telegram login data is invalid", "Telegram 登录数据无效"),
    "telegram_expired": ("The Telegram login has expired, log in again", "Telegram 登录已过期，请重新登录"),
    "option_unknown": ("Unknown option: {key}", "未知的配置项：{key}"),
    "option_not_string": ("The option value must be a string", "配置值必须是字符串"),
    "option_invalid_json": ("{key} is not a valid JSON string", "{key} 不是合法的 JSON 字符串"),
    "option_invalid_bool": ("{key} must be true or false", "{key} 必须是 true 或 false"),
    "option_invalid_number": ("{key} must be a number", "{key} 必须是数字"),
    "option_invalid_integer": ("{key} must be an integer", "{key} 必须是整数"),
    "option_min": ("{key} must be at least {min}", "{key} 不能小于 {min}"),
    "option_range": ("{key} must be between {min} and {max}", "{key} 必须在 {min} 到 {max} 之间"),
    "option_ratio_map": (
        "{key} must be a JSON object of non-negative numbers", "{key} 必须是值为非负数字的 JSON 对象"),
    "option_stripe_key": ("Invalid Stripe API key: it must start with sk_", "无效的 Stripe API 密钥，必须以 sk_ 开头"),
    "option_stripe_webhook": (
        "Invalid Stripe webhook signing key: it must start with whsec_", "无效的 Stripe Webhook 签名密钥，必须以 whsec_ 开头"),
    "option_stripe_price": ("Invalid Stripe price ID: it must start with price_", "无效的 Stripe 价格 ID，必须以 price_ 开头"),
    "option_server_address_required": (
        "Set the server address before saving payment settings", "请先填写服务器地址再保存支付设置"),
    "option_requires": ("Fill in {other} before enabling {key}", "请先填写 {other} 再启用 {key}"),
    "option_chats": (
        "Chats must be a JSON list of objects mapping a name to a URL template",
        "Chats 必须是由“名称: 链接模板”对象组成的 JSON 列表"),
    "option_url": ("{key} must be an http(s) URL", "{key} 必须是 http(s) 链接"),
    "option_data_export_time": ("DataExportDefaultTime must be hour, day or week", "DataExportDefaultTime 必须是 hour、day 或 week"),
    "option_model_capabilities": ("Invalid ModelCapabilities: {problem}", "ModelCapabilities 无效：{problem}"),
    "option_currency": ("{key} must be a lowercase three-letter ISO currency code such as cny or usd", "{key} 必须是三个小写字母的 ISO 货币代码，如 cny 或 usd"),
    # -- channels --
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
        "The key of a Vertex AI channel is a service-account JSON key (the whole file) or a Vertex AI API key "
        "(one line): this JSON is not a service-account key ({problem}) (line {line})",
        "Vertex AI 渠道的密钥是服务账号 JSON 密钥（整个文件）或一行 Vertex AI API Key：这段 JSON 不是服务账号密钥（{problem}）"
        "（第 {line} 行）"),
    "channel_key_vertex_api_key": (
        "The key of a Vertex AI channel is a service-account JSON key (the whole file) or a Vertex AI API key "
        "on one line without spaces (AIza… or AQ.…) (line {line})",
        "Vertex AI 渠道的密钥是服务账号 JSON 密钥（整个文件）或一行不含空格的 Vertex AI API Key（AIza… 或 AQ.…）"
        "（第 {line} 行）"),
    "channel_key_vertex_token": (
        "This is an OAuth access token (ya29.…), which expires within an hour: use a service-account JSON key "
        "or a Vertex AI API key (line {line})",
        "这是 OAuth 访问令牌（ya29.…），一小时内就会过期：请使用服务账号 JSON 密钥或 Vertex AI API Key（第 {line} 行）"),
    "channel_vertex_region_table": (
        "The Vertex AI region field is empty (us-central1) or a JSON object of model to region, with \"default\" "
        "for the other models; a region is global or like us-central1",
        "Vertex AI 部署地区为空（即 us-central1），或为“模型 → 地区”的 JSON 对象（\"default\" 表示其他模型）；"
        "地区为 global 或形如 us-central1"),
    "channel_key_baidu": (
        "The key of a Baidu channel is APIKey|SecretKey (line {line})", "百度渠道的密钥格式为 APIKey|SecretKey（第 {line} 行）"),
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
        "Azure OpenAI 渠道的 API 版本留空即使用 v1 API；也可填写 v1、preview 或带日期的版本，如 2024-10-21、2025-04-01-preview"),
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
    # -- multi-key channels and tags --
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
        "This channel has no such key (its key list may have changed: refresh)", "该渠道没有这个密钥（密钥列表可能已变化，请刷新）"),
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
    # -- relay --
    "relay_no_key": ("No API key provided (use Authorization: Bearer sk-...)", "未提供令牌（请使用 Authorization: Bearer sk-...）"),
    "relay_invalid_key": ("Invalid API key", "无效的令牌"),
    "relay_key_disabled": ("This API key has been disabled", "该令牌已被禁用"),
    "relay_key_expired": ("This API key has expired", "该令牌已过期"),
    "relay_key_exhausted": ("The quota of this API key is used up", "该令牌额度已用尽"),
    "relay_key_insufficient": (
        "The remaining quota of this API key ({remain}) is below this request's pre-charge ({pre})",
        "令牌剩余额度（{remain}）不足以预扣本次请求（{pre}）"),
    "relay_user_banned": ("This user has been banned", "用户已被封禁"),
    "relay_user_insufficient": (
        "Your quota ({remain}) is below this request's pre-charge ({pre})", "用户额度（{remain}）不足以预扣本次请求（{pre}）"),
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
        "Rate limit reached: {scope} ({limit}); retry in {seconds} s", "请求过于频繁：{scope}（上限 {limit}），请 {seconds} 秒后重试"),
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
    "option_status_ranges": (
        "{key} must be status codes or ranges between 100 and 599, e.g. 401-407,429,500-503",
        "{key} 必须是 100 到 599 之间的状态码或范围，例如 401-407,429,500-503"),
    "mail_daily_cap": (
        "This address has received the most mails allowed in 24 hours ({max}), try again in {minutes} min",
        "该邮箱 24 小时内收到的邮件已达上限（{max} 封），请 {minutes} 分钟后再试"),
}


def language(request: web.Request | None) -> str:
    if request is None:
        return "en"
    lang = request.headers.get("Accept-Language", "")
    # The first listed language wins; the console sends its own choice first.
    first = lang.split(",", 1)[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def translate(message_key: str, lang: str = "en", /, **params: object) -> str:
    pair = MESSAGES.get(message_key)
    if pair is None:
        return message_key.format(**params) if params else message_key
    text = pair[1] if lang == "zh" else pair[0]
    return text.format(**params) if params else text
