"""Queries over the index: lanes, re-ranks, the dense lane."""
