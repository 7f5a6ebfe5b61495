"""Batteries anyone can rerun: whole-pipeline runs that prove a property (every injected fault
is a row of its kind, ...). They sit above everything they drive; bench/ and tests/ call them."""
