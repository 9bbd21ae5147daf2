"""serving stage."""
