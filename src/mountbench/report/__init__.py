"""Renderers: pure functions from summaries and stored runs to text, HTML and charts."""
