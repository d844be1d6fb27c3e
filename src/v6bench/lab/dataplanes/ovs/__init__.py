"""Open vSwitch's userspace datapath as a router (``data_plane = "ovs"``): :mod:`.plane`, its flows :mod:`.flows`."""
