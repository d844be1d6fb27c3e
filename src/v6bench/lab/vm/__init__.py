"""Routers that are QEMU virtual machines with Debian's kernel, inside the
emulated lab (``[lab] router = "vm"``): the guest image (``vm_image``,
``guest/init``), a VM's start and control port (``vm``, ``guest``), its
start-up configuration (``vm_config``), and the lab's VM routers made,
observed and reset (``vm_lab``)."""
