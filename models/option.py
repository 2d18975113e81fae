from tortoise import fields
from tortoise.models import Model


class Option(Model):
    key = fields.CharField(max_length=128, primary_key=True)
    value = fields.TextField(default="")

    class Meta:
        table = "option"
