"""Enumerations shared by the models, the API and the workers (numeric values are wire values)."""
from enum import IntEnum, StrEnum


class Role(IntEnum):
    GUEST = 0
    USER = 1
    ADMIN = 10
    ROOT = 100


class UserStatus(IntEnum):
    ENABLED = 1
    DISABLED = 2


class TokenStatus(IntEnum):
    ENABLED = 1
    DISABLED = 2
    EXPIRED = 3
    EXHAUSTED = 4


class ChannelStatus(IntEnum):
    ENABLED = 1
    MANUALLY_DISABLED = 2
    AUTO_DISABLED = 3


class RedemptionStatus(IntEnum):
    UNUSED = 1
    DISABLED = 2
    USED = 3


class LogType(IntEnum):
    UNKNOWN = 0
    TOPUP = 1
    CONSUME = 2
    MANAGE = 3
    SYSTEM = 4
    ERROR = 5  # a relayed call that failed for good (new-api's type 5): no charge


class TopUpStatus(StrEnum):
    PENDING = "pending"
    SUCCESS = "success"
    EXPIRED = "expired"
    FAILED = "failed"


class TaskStatus(StrEnum):
    NOT_START = "NOT_START"
    SUBMITTED = "SUBMITTED"
    QUEUED = "QUEUED"
    IN_PROGRESS = "IN_PROGRESS"
    FAILURE = "FAILURE"
    SUCCESS = "SUCCESS"
    UNKNOWN = "UNKNOWN"
    MODAL = "MODAL"
