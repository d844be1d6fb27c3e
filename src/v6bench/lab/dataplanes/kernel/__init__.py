"""Linux's kernel forwarding (``data_plane = "kernel"``, the default): :mod:`.plane`."""
