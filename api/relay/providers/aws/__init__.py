"""AWS Bedrock: Claude models through InvokeModel, signed with SigV4."""

from api.relay.providers.aws.adaptor import BedrockAdaptor

__all__ = ["BedrockAdaptor"]
