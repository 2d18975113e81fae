"""The data model. Tortoise discovers every model re-exported here."""
from .audit import AuditEntry
from .budget import BudgetUsage
from .channel import Ability, Channel
from .custom_oauth import CustomOAuthProvider, UserOAuthBinding
from .log import Log, QuotaData, Settlement
from .mcp_server import McpServer
from .option import Option
from .passkey import PasskeyCredential
from .redemption import Redemption
from .task import Midjourney, Task
from .token import Token
from .topup import TopUp
from .two_factor import TwoFactor, TwoFactorBackupCode
from .user import User

__all__ = [
    "Ability",
    "AuditEntry",
    "BudgetUsage",
    "Channel",
    "CustomOAuthProvider",
    "Log",
    "McpServer",
    "Midjourney",
    "Option",
    "PasskeyCredential",
    "QuotaData",
    "Redemption",
    "Settlement",
    "Task",
    "Token",
    "TopUp",
    "TwoFactor",
    "TwoFactorBackupCode",
    "User",
    "UserOAuthBinding",
]
