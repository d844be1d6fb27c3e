"""Router data planes: what forwards a frame inside a router v6bench builds.

A router (a namespace or a VM, lab/model/spec.ROUTERS) forwards with one
data plane, chosen by ``[lab] data_plane`` (``--data-plane``): Linux's
kernel forwarding, or a fast path beside it that hands the kernel what it
cannot forward itself. Each data plane is a folder here with a
:class:`~.protocol.DataPlane` and one line in :data:`.registry.REGISTRY`;
its own count of the frames it forwarded is read around every trial and
compared with the engine's (docs/data-planes.md).
"""
