"""Exercises 14-18: a real small model, safety, scaling up, Home Assistant, a real home's doors.

For notebooks 14-18 of ``notebooks/``; the machinery is :mod:`lares_kit.learn.checking`.
"""
