"""Server messages of accounts: login, registration, mail, self-service, user administration, OAuth."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
ACCOUNTS: dict[str, tuple[str, str]] = {
    "login_fields_required": ("Please enter username and password", "请输入用户名和密码"),
    "login_failed": ("Wrong username or password, or the user has been banned", "用户名或密码错误，或用户已被封禁"),
    "password_login_disabled": (
        "The administrator has turned off password login", "管理员关闭了密码登录"),
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
    "mail_daily_cap": (
        "This address has received the most mails allowed in 24 hours ({max}), try again in {minutes} min",
        "该邮箱 24 小时内收到的邮件已达上限（{max} 封），请 {minutes} 分钟后再试"),
    "verification_required": (
        "Verify it is you first (password, two-factor code or passkey): this needs a verification within 5 minutes",
        "请先验证身份（密码、两步验证码或通行密钥）：此操作需要 5 分钟内的验证"),
}
