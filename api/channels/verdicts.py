"""What a channel's test result means for it: disable, enable or nothing, by the automatic rules
(AutomaticDisable/EnableChannelEnabled, ChannelDisableThreshold and the channel's `auto_ban`)."""
from __future__ import annotations

from api.channels.channel_test import TestResult
from api.channels.error_rules import should_disable_for_error
from api.services.configuration.options import OptionsService
from models import Channel
from models.enums import ChannelStatus

DISABLE, ENABLE = "disable", "enable"


def is_too_slow(result: TestResult, threshold: float) -> bool:
    """Over ChannelDisableThreshold seconds (0 = no limit), a timeout at least that long included."""
    return threshold > 0 and (result.elapsed > threshold or (result.timed_out and result.timeout >= threshold))


def verdict(channel: Channel, result: TestResult, options: OptionsService) -> tuple[str, str] | None:
    """(DISABLE|ENABLE, reason) per AutomaticDisable/EnableChannelEnabled and ChannelDisableThreshold.

    A manually disabled channel (status 2) is never touched.
    """
    threshold = options.get_float("ChannelDisableThreshold")
    too_slow = is_too_slow(result, threshold)
    if channel.status == ChannelStatus.ENABLED:
        if not channel.auto_ban or not options.get_bool("AutomaticDisableChannelEnabled"):
            return None
        if result.error is not None and should_disable_for_error(result.error, channel.type):
            return DISABLE, result.message
        if too_slow:
            reason = result.message if result.timed_out else (
                f"response time {result.elapsed:.2f}s is over the threshold of {threshold:g}s")
            return DISABLE, reason
    elif channel.status == ChannelStatus.AUTO_DISABLED:
        if options.get_bool("AutomaticEnableChannelEnabled") and result.success and not too_slow:
            return ENABLE, ""
    return None
