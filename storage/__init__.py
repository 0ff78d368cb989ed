"""Rowset files and the tiers they live on. Imports only `schemas`."""
