"""Readers of the literature dumps (CORD-19 ``metadata.csv``, PubMed/MEDLINE XML) into corpus JSONL."""
