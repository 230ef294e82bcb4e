"""Checks `make lint` runs (import contracts, URL layers) and the analysis ZIPs' comparison."""
