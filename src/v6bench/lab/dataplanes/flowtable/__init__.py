"""nftables' flowtable fast path (``data_plane = "flowtable"``): :mod:`.plane`."""
