"""Server messages of API keys (tokens), redemption codes, the wallet and payments, logs and the
dashboard."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
TOKENS_WALLET: dict[str, tuple[str, str]] = {
    "token_not_found": ("Token not found", "令牌不存在"),
    "token_name_required": ("Please enter a token name", "请输入令牌名称"),
    "token_name_too_long": (
        "The token name is too long (at most {max} characters)", "令牌名称过长（最多 {max} 个字符）"),
    "token_quota_invalid": (
        "The remaining quota must be an integer of at least 0 (or choose unlimited quota)",
        "剩余额度必须是不小于 0 的整数（或设为无限额度）"),
    "token_expiry_invalid": (
        "The expiry must be -1 (never expires) or a time in the future", "过期时间必须为 -1（永不过期）或未来的时间"),
    "token_invalid_ip": ("Invalid IP address or network in the allowed IPs: {ip}", "IP 白名单中的地址无效：{ip}"),
    "token_allow_ips_too_many": ("At most {max} allowed IP entries", "IP 白名单最多 {max} 条"),
    "token_too_many": (
        "You already have {max} tokens, the most a user may hold: delete one to create another",
        "您已有 {max} 个令牌，已达上限，请删除不用的令牌后再创建"),
    "token_create_too_fast": (
        "At most {limit} tokens may be created per minute: try again in a minute",
        "每分钟最多创建 {limit} 个令牌，请一分钟后再试"),
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
}
