"""Server messages of custom OAuth 2 / OpenID Connect providers: their administration, the login
through them, ID-token checks and bindings."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
OIDC: dict[str, tuple[str, str]] = {
    "custom_oauth_not_found": ("OAuth provider not found", "未找到该 OAuth 提供商"),
    "custom_oauth_slug_taken": ("The slug is already in use", "该 Slug 已被使用"),
    "custom_oauth_slug_reserved": (
        "The slug {slug} belongs to a built-in login", "该 Slug（{slug}）与内置 OAuth 提供商冲突"),
    "custom_oauth_slug_invalid": (
        "The slug may contain only lowercase letters, digits and hyphens (at most 64)",
        "Slug 只能包含小写字母、数字和连字符（最多 64 个字符）"),
    "custom_oauth_field_required": ("{field} is required", "{field} 不能为空"),
    "custom_oauth_field_too_long": ("{field} must be at most {max} characters", "{field} 不能超过 {max} 个字符"),
    "custom_oauth_field_type": ("{field} has the wrong type", "{field} 的类型不正确"),
    "custom_oauth_url_invalid": ("{field} must be an http or https URL", "{field} 必须是 http 或 https 地址"),
    "custom_oauth_field_unsupported": (
        "{field} = {value} is not supported by this gateway", "本网关不支持 {field} = {value}"),
    "custom_oauth_oidc_fields": (
        "An OpenID Connect provider (scope openid) needs its issuer and its JWKS URL",
        "OpenID Connect 提供商（scope 含 openid）必须填写 Issuer 与 JWKS URL"),
    "custom_oauth_userinfo_required": (
        "A provider without the openid scope needs its user info endpoint",
        "scope 不含 openid 的提供商必须填写用户信息端点"),
    "custom_oauth_has_bindings": (
        "Users are still bound to this OAuth provider: unbind them before deleting it",
        "该 OAuth 提供商还有用户绑定，无法删除。请先解除所有用户绑定。"),
    "custom_oauth_discovery_url_required": (
        "Enter the discovery URL or the issuer URL first", "请先填写 Discovery URL 或 Issuer URL"),
    "custom_oauth_discovery_failed": (
        "Fetching the discovery document failed: {reason}", "获取 Discovery 配置失败：{reason}"),
    "custom_oauth_discovery_issuer": (
        "The discovery document names the issuer {found}, not {expected}",
        "Discovery 配置中的 issuer 为 {found}，而不是 {expected}"),
    "custom_oauth_address_refused": (
        "The address {url} is refused: only http(s) to a public address (the option MediaFetchPrivateEnabled "
        "allows private ones)",
        "地址 {url} 被拒绝：只允许 http(s) 且指向公网地址（选项 MediaFetchPrivateEnabled 可允许内网地址）"),
    "custom_oauth_disabled": ("Login with {provider} is not enabled", "管理员未启用 {provider} 登录"),
    "custom_oauth_no_user_id": (
        "{provider} did not say who the user is (field {field})", "{provider} 未返回用户标识（字段 {field}）"),
    "custom_oauth_not_bound": ("This account is not bound to {provider}", "该账户未绑定 {provider}"),
    "custom_oauth_last_login": (
        "{provider} is this account's only way to log in: set a password or bind another login first",
        "{provider} 是该账户唯一的登录方式：请先设置密码或绑定其他登录方式"),
    "oidc_token_missing": ("{provider} sent no ID token", "{provider} 未返回 ID Token"),
    "oidc_token_invalid": ("The ID token from {provider} is malformed", "{provider} 返回的 ID Token 格式错误"),
    "oidc_token_signature": (
        "The ID token from {provider} is not signed by its keys", "{provider} 返回的 ID Token 签名无效"),
    "oidc_token_expired": (
        "The ID token from {provider} has expired or is not valid yet", "{provider} 返回的 ID Token 已过期或尚未生效"),
    "oidc_token_issuer": (
        "The ID token from {provider} was issued by another issuer", "{provider} 返回的 ID Token 签发者不符"),
    "oidc_token_audience": (
        "The ID token from {provider} is meant for another client", "{provider} 返回的 ID Token 受众不符"),
    "oidc_token_nonce": (
        "The ID token from {provider} does not belong to this login",
        "{provider} 返回的 ID Token 不属于本次登录（nonce 不符）"),
    "oidc_userinfo_mismatch": (
        "The user info from {provider} is of another user than its ID token",
        "{provider} 返回的用户信息与 ID Token 不是同一用户"),
}
