"""Server messages of two-factor login and of re-verification before secrets."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
TWO_FACTOR: dict[str, tuple[str, str]] = {
    "two_factor_required": ("Enter the code of your authenticator app", "请输入两步验证码"),
    "two_factor_setup_required": (
        "Two-factor login is required for administrators: set it up to continue",
        "管理员必须启用两步验证：请先完成设置"),
    "two_factor_setup_started": (
        "Scan the QR code with your authenticator app, then enter its code to turn two-factor login on",
        "请使用认证器扫描二维码，并输入验证码完成设置"),
    "two_factor_enabled": ("Two-factor login is on", "两步验证启用成功"),
    "two_factor_disabled": ("Two-factor login is off", "两步验证已禁用"),
    "two_factor_reset": ("The user's two-factor login has been turned off", "用户的两步验证已被重置"),
    "two_factor_backup_codes_new": (
        "New backup codes: store them now, they are shown only once", "备用码重新生成成功，请立即保存，仅显示一次"),
    "two_factor_already_enabled": (
        "Two-factor login is already on: turn it off first to set it up again",
        "用户已启用两步验证，请先禁用后重新设置"),
    "two_factor_setup_first": ("Start the two-factor setup first", "请先完成两步验证初始化设置"),
    "two_factor_not_enabled": ("Two-factor login is not on for this account", "该账户未启用两步验证"),
    "two_factor_code_required": ("Enter a code", "请输入验证码"),
    "two_factor_code_format": (
        "The code is the 6 digits your authenticator app shows", "验证码为认证器显示的 6 位数字"),
    "two_factor_code_invalid": (
        "Wrong or already used code, or backup code: try again", "验证码或备用码错误或已使用，请重试"),
    "two_factor_login_expired": (
        "The login has expired or was not started in this browser: log in with your password again",
        "登录已过期或未在此浏览器中开始，请重新输入密码登录"),
    "two_factor_backoff": (
        "Too many wrong codes or passwords for this account: try again in {seconds} s",
        "该账户验证码或密码错误次数过多，请 {seconds} 秒后再试"),
    "two_factor_still_required": (
        "Two-factor login is required for administrators: it cannot be turned off",
        "管理员必须启用两步验证，无法禁用"),
    "two_factor_disable_proof": (
        "Enter your password or a code of your authenticator app (or a backup code)",
        "请输入密码或两步验证码（或备用码）"),
    "verify_method_unknown": (
        "Unknown verification method {method}: use password, 2fa or passkey",
        "未知的验证方式 {method}：请使用 password、2fa 或 passkey"),
    "verify_method_unavailable": (
        "This account cannot verify with {method}", "该账户无法使用 {method} 验证"),
    "verify_password_wrong": ("Wrong password", "密码错误"),
    "verify_passkey_first": (
        "Verify with your passkey first", "请先完成通行密钥验证"),
    "verified": ("Verified", "验证成功"),
}
