from tortoise import fields

from .base import BaseModel


class BudgetUsage(BaseModel):
    """What one window of one limit's owner holds in the database: the charges of the settlement
    records applied so far (api.services.budgets.durable), and the soft alerts claimed in it.

    A user's group limits are an allowance per user, so every row belongs to a user (`user_id`), and
    the owner is named by its kind and id: key (the token's id), user (the user's id), group (its name).
    `identity` is the limit's window and model (`day`, `day@gpt-5*`): limits sharing it share the row.
    """

    user_id = fields.IntField()
    owner_kind = fields.CharField(max_length=8)  # key | user | group
    owner_id = fields.CharField(max_length=64)
    identity = fields.CharField(max_length=160)
    window = fields.CharField(max_length=16)
    model = fields.CharField(max_length=128, default="")
    window_start = fields.BigIntField()  # epoch seconds
    window_end = fields.BigIntField()
    quota = fields.BigIntField(default=0)
    requests = fields.BigIntField(default=0)
    tokens = fields.BigIntField(default=0)
    # The soft alerts claimed in this window (api.services.budgets.alerts), one per limit: space-separated
    # `<measure>:<amount>=<claim>` entries, each set once by a conditional UPDATE.
    soft_alerts = fields.TextField(default="")

    class Meta:
        table = "budget_usage"
        unique_together = (("user_id", "owner_kind", "owner_id", "identity", "window_start"),)
        indexes = (("user_id", "window_end"),)
