"""The files layer: reading, writing and checking scenario files (:mod:`.scenario_io`, :mod:`.checks`) and rate
profiles (:mod:`.profile_io`). It sits above the engine because a check asks the capability table
(:mod:`..sim.capabilities`) whether a scenario can run."""
