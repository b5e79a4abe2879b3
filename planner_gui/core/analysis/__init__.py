"""The analysis layer: what runs the engine and says what the results mean. One scenario's results
(:mod:`.results`, :mod:`.summary`, :mod:`.spares_result`), sweeps (:mod:`.sweep`), the time to train
(:mod:`.training`), sensitivity and tornado (:mod:`.sensitivity`, :mod:`.tornado`), comparisons (:mod:`.compare`),
spare-pool sizing (:mod:`.sizing`), restart against continue (:mod:`.modes`), recovery strategies side by side
(:mod:`.strategies`), and the published results reproduced (:mod:`.validation`). Imports the files layer and below,
never a study, the session or a decision."""
