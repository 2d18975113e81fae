"""AWS Bedrock: Claude through InvokeModel and the other chat models through Converse, signed with
SigV4 or authorized with a Bedrock API key."""

from api.upstream.providers.aws.adaptor import BedrockAdaptor, BedrockConverseAdaptor, key_problem

__all__ = ["BedrockAdaptor", "BedrockConverseAdaptor", "key_problem"]
