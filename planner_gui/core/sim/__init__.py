"""The general engine: every feature of the model (docs/model.md) in one simulation.

:mod:`.model` puts a scenario in the engine's units, :mod:`.world` draws what happens whatever the job does
(failures, repairs, the pool, replicas), :mod:`.job` steps the job over it, :mod:`.run` runs them, and
:mod:`.capabilities` says which engine runs a scenario.
"""
