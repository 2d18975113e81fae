"""Server messages of passkeys (WebAuthn): registration, login, re-verification, administration."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
PASSKEYS: dict[str, tuple[str, str]] = {
    "passkey_disabled": ("The administrator has not enabled passkey login", "管理员未启用 Passkey 登录"),
    "passkey_server_address_required": (
        "Passkeys need the server address (ServerAddress, e.g. https://gateway.example.com) set by the administrator",
        "Passkey 需要管理员先设置服务器地址（ServerAddress，例如 https://gateway.example.com）"),
    "passkey_server_address_invalid": (
        "The server address (ServerAddress) must be an http(s) address with a domain name for passkeys, not {address}",
        "Passkey 要求服务器地址（ServerAddress）是带域名的 http(s) 地址，而不是 {address}"),
    "passkey_session_required": (
        "Passkeys are managed from a logged-in console session, not with an access token",
        "Passkey 需要在已登录的控制台会话中管理，不能使用访问令牌"),
    "passkey_name_too_long": ("The passkey name must be at most {max} characters", "Passkey 名称不能超过 {max} 个字符"),
    "passkey_name_invalid": ("The passkey name may not contain control characters", "Passkey 名称不能包含控制字符"),
    "passkey_limit": ("An account may have at most {max} passkeys", "每个账户最多可以注册 {max} 个 Passkey"),
    "passkey_challenge_missing": (
        "No passkey request is waiting (it was already used or never started): start again",
        "没有待完成的 Passkey 请求（已使用或未开始），请重新开始"),
    "passkey_challenge_expired": (
        "The passkey request has expired: start again", "Passkey 请求已过期，请重新开始"),
    "passkey_response_invalid": ("The passkey answer is malformed", "Passkey 响应格式无效"),
    "passkey_register_failed": ("The passkey could not be registered, try again", "Passkey 注册失败，请重试"),
    "passkey_already_registered": (
        "This passkey is already registered", "该 Passkey 已被注册"),
    "passkey_unknown": ("This passkey is not registered here", "该 Passkey 未在此注册"),
    "passkey_login_failed": ("Passkey verification failed, try again", "Passkey 验证失败，请重试"),
    "passkey_wrong_site": (
        "The passkey answer was made for another site than {origin}: open the console at that address (ServerAddress)",
        "Passkey 响应来自 {origin} 以外的站点：请通过该地址（ServerAddress）打开控制台"),
    "passkey_user_verification": (
        "The authenticator did not verify you (PIN, fingerprint or face): passkeys here require it",
        "认证器未验证您的身份（PIN、指纹或面容）：此处的 Passkey 需要该验证"),
    "passkey_cloned": (
        "This passkey's signature counter went back: it may have been copied, so it is refused. "
        "Use another passkey or your password, and remove this one",
        "该 Passkey 的签名计数器回退，可能已被复制，已拒绝。请使用其他 Passkey 或密码登录，并删除此 Passkey"),
    "passkey_none": ("You have not registered a passkey", "您尚未注册 Passkey"),
    "passkey_none_for_user": ("This user has not registered a passkey", "该用户尚未绑定 Passkey"),
    "passkey_not_found": ("No such passkey", "Passkey 不存在"),
}
