"""What a command does, over storage, the index and search."""
