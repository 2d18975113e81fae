"""The upstream seam: adaptors, signing, decoders, credentials, media and the one upstream call."""
