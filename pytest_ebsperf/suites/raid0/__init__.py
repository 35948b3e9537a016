"""RAID0 and sets of volumes measured together (seed 004, seed 002)."""
