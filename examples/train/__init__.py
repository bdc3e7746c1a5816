"""Train a linear UNO policy with the cross-entropy method and export it as a bot."""
