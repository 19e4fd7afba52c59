"""Plumbing shared by every stage: configuration, errors, hashing, atomic JSONL, caches, limits,
safe references, manifests, the trust model, CSV safety, fingerprints and user-file reading."""
