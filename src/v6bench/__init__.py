"""v6bench: an open lab that measures what IPv6 costs a router."""

__version__ = "0.1.0"
