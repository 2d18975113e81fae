"""Configuration: options and their rules, capabilities, first start, sensitive words."""
