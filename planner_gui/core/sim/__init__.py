"""The sim layer: the engines and what they share.

The general engine runs every feature of the model (docs/model.md) in one simulation: :mod:`.model` puts a scenario
in the engine's units, :mod:`.world` draws what happens whatever the job does (failures, repairs, the pool, replicas,
racks, bad nodes), :mod:`.job` steps the job over it, :mod:`.run` runs them, and :mod:`.capabilities` says which
engine runs a scenario (the one capability table). The fast paths a test shows equal to it: the single-tier engine
(:mod:`.engine`, with :mod:`.chunk_sums`, :mod:`.edges`, :mod:`.varying`) and the two-tier engine (:mod:`.tiers`,
:mod:`.tiers_outside`, :mod:`.tiers_run`). :mod:`.rows` draws the random numbers, and :mod:`.intervals` splits an
interval between interruptions into downtime, compute, writes and lost work. Imports only the theory, model and util
layers.
"""
