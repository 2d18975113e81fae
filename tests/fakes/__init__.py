"""Local stand-ins for outside services, speaking their real protocols."""
