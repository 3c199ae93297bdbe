"""Upgrades: a database written by an earlier release keeps working with this one."""
