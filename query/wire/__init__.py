"""Strata's hardened MySQL protocol layer over mysql-mimic 3.0.5 (see each module's header for what
it replaces and why): bounded packet reads, a login deadline, prepared statements with parameters
bound as typed literals."""

from query.wire.connection import WireConnection, WireLimits
from query.wire.server import WireServer

__all__ = ["WireConnection", "WireLimits", "WireServer"]
