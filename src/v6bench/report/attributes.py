"""What a run is, as a comparison across runs asks about it (``v6bench
compare --by``): its machine, DUT, configuration, kernel and campaign.
Light on purpose (no statistics imported): the command line builds its
``--by`` choices from :data:`ATTRIBUTES` on every command."""

from __future__ import annotations

import hashlib
import json

from ..core import machine

#: Run attributes a comparison can ask about (``--by``): what each is, read from the run.
ATTRIBUTES = ("machine", "dut", "config", "kernel", "campaign")


def attributes(run: dict) -> dict[str, str]:
    """A run's attributes (:data:`ATTRIBUTES`): the machine
    (:func:`..core.machine.group`), the DUT's description, a hash of
    the lab and DUT configuration, the kernel and the campaign (its name
    and file hash)."""
    env = run["environment"]
    # A campaign with scenarios keeps each one's lab and DUT under its name; the top level is whichever
    # the run's (randomized) order visited first, so a repeat of the run may carry another there.
    labs = env.get("scenarios") or {"": env}
    config = {name: _config(e) for name, e in sorted(labs.items())}
    dut = "; ".join(f"{name}: {d}" if name else d for name, d in
                    sorted((n, str((e.get("dut") or {}).get("description") or "?")) for n, e in labs.items()))
    return {"machine": machine.group(env), "dut": dut,
            "config": hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:12],
            "kernel": str(env.get("kernel") or "?"),
            "campaign": f"{run.get('name')} {(run.get('campaign_sha256') or '')[:12]}".strip()}


def _config(env: dict) -> dict:
    """One lab's configuration as the hash sees it: topology, link speed, MTU, router kind, tunnel, table, DUT."""
    lab = env.get("lab") or {}
    fib = lab.get("fib")
    return {"dut": (env.get("dut") or {}).get("config"), "topology": lab.get("topology"),
            "link_speed_bps": lab.get("link_speed_bps"), "mtu": lab.get("mtu"), "router": lab.get("router"),
            "tunnel": lab.get("tunnel"), "fib": fib.get("table") if isinstance(fib, dict) else fib}
