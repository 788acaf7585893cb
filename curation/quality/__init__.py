"""Label-error audit: per-item results of every evaluation, model
probabilities, CROWDLAB and Dawid-Skene over the votes, and the review queue."""
