"""Defences against hostile text and addresses: the injection filter, secret masking, URL checks.

Pure functions over strings; imports nothing of deskresearch but errors and records.
"""
