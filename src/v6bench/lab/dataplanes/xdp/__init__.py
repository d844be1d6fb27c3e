"""An XDP forwarder looking routes up in the kernel's FIB (``data_plane = "xdp"``): :mod:`.plane`."""
