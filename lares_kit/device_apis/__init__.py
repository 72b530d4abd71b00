"""SAGE's device APIs: devices read from their documents, devices named by what is near them, and the
home's offline information sources (the TV guide, the weather).

Taught in ``11_device_apis_and_disambiguation``.
"""
