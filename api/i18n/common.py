"""Server messages shared by every part: sign-in state, permissions, rate limits, malformed requests."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names.
COMMON: dict[str, tuple[str, str]] = {
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
    "invalid_nul": (
        "The request holds a NUL character, which no field may contain", "请求包含 NUL 字符，任何字段都不能包含"),
}
