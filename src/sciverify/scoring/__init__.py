"""scoring stage."""
