"""elicitkit's own pages: URL-mode forms, third-party callbacks."""
