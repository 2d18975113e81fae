"""Server messages of budgets and limits over time (api/services/budgets): their validation and the
relay's refusal of a request over one."""
from __future__ import annotations

# key: (English, Chinese). Parameters use str.format names; `where` names the list ("limits", or
# "GroupLimits.<group>"), `index` the entry, `field` its field.
BUDGETS: dict[str, tuple[str, str]] = {
    "limits_not_list": ("{where} must be a list of limits", "{where} 必须是限额列表"),
    "limits_too_many": ("{where} has {count} limits: at most {max}", "{where} 共 {count} 项限额，最多 {max} 项"),
    "limit_not_object": ("{where}[{index}] is not an object", "{where}[{index}] 不是对象"),
    "limit_unknown_field": (
        "{where}[{index}].{field} is not a field of a limit (window, quota, requests, tokens, model, soft)",
        "{where}[{index}].{field} 不是限额的字段（window、quota、requests、tokens、model、soft）"),
    "limit_window_invalid": (
        "{where}[{index}].window must be minute, hour, day, week, month or <N>h with N from 1 to {max}",
        "{where}[{index}].window 必须是 minute、hour、day、week、month 或 <N>h（N 为 1 到 {max}）"),
    "limit_measure_missing": (
        "{where}[{index}] names no measure: give one of quota, requests, tokens",
        "{where}[{index}] 未指定计量：请给出 quota、requests、tokens 之一"),
    "limit_measure_two": (
        "{where}[{index}] names {field} and {other}: one measure per limit",
        "{where}[{index}] 同时指定了 {field} 与 {other}：每项限额只能有一种计量"),
    "limit_value_invalid": (
        "{where}[{index}].{field} must be an integer from 0 to {max}",
        "{where}[{index}].{field} 必须是 0 到 {max} 之间的整数"),
    "limit_soft_invalid": (
        "{where}[{index}].soft must be an integer percentage from 1 to 100",
        "{where}[{index}].soft 必须是 1 到 100 之间的整数百分比"),
    "limit_model_invalid": (
        "{where}[{index}].model must be a model name or a pattern with * of at most {max} characters",
        "{where}[{index}].model 必须是模型名或含 * 的模式，最多 {max} 个字符"),
    "limits_group_invalid": ("GroupLimits must be a JSON object of group → limits",
                             "GroupLimits 必须是“分组 → 限额列表”的 JSON 对象"),
    "budget_timezone_invalid": ("{value} is not a time zone name (e.g. UTC, Asia/Shanghai)",
                                "{value} 不是时区名称（如 UTC、Asia/Shanghai）"),
    "relay_budget_exceeded": (
        "Budget exceeded: the {owner}'s {window} limit of {limit} {measure}{model} is reached ({used} used); "
        "it resets at {resets_at} (in {seconds} s)",
        "已超出限额：{owner}的 {window} 限额 {limit} {measure}{model} 已用 {used}；"
        "将于 {resets_at}（{seconds} 秒后）重置"),
}
