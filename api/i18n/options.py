"""Server messages of the runtime options (/api/option): each refusal of a value."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
OPTIONS: dict[str, tuple[str, str]] = {
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
        "Invalid Stripe webhook signing key: it must start with whsec_",
        "无效的 Stripe Webhook 签名密钥，必须以 whsec_ 开头"),
    "option_stripe_price": (
        "Invalid Stripe price ID: it must start with price_", "无效的 Stripe 价格 ID，必须以 price_ 开头"),
    "option_server_address_required": (
        "Set the server address before saving payment settings", "请先填写服务器地址再保存支付设置"),
    "option_requires": ("Fill in {other} before enabling {key}", "请先填写 {other} 再启用 {key}"),
    "option_chats": (
        "Chats must be a JSON list of objects mapping a name to a URL template",
        "Chats 必须是由“名称: 链接模板”对象组成的 JSON 列表"),
    "option_url": ("{key} must be an http(s) URL", "{key} 必须是 http(s) 链接"),
    "option_origins": ("{key} is a comma-separated list of origins such as https://app.example.com ({origin})",
                       "{key} 为逗号分隔的来源列表，例如 https://app.example.com（{origin}）"),
    "option_data_export_time": (
        "DataExportDefaultTime must be hour, day or week", "DataExportDefaultTime 必须是 hour、day 或 week"),
    "option_model_capabilities": ("Invalid ModelCapabilities: {problem}", "ModelCapabilities 无效：{problem}"),
    "option_model_chain": ("Invalid {key}: entry {entry}: {problem}", "{key} 无效：条目 {entry}：{problem}"),
    "option_currency": (
        "{key} must be a lowercase three-letter ISO currency code such as cny or usd",
        "{key} 必须是三个小写字母的 ISO 货币代码，如 cny 或 usd"),
    "option_status_ranges": (
        "{key} must be status codes or ranges between 100 and 599, e.g. 401-407,429,500-503",
        "{key} 必须是 100 到 599 之间的状态码或范围，例如 401-407,429,500-503"),
}
