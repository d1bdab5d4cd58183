"""Bytes in and out: opening plain and compressed files, change detection, JSON and JSON Lines reading,
format sniffing, atomic writes and the TOML writer. The first stage of the pipeline; nothing here knows
what a record is.
"""
