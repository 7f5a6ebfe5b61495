"""Skill cards: loading, checking and instantiating the declarative cards of skills/<app>/."""
