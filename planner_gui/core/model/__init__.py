"""The model layer: what a scenario is (:mod:`.scenario`), its checkpoint tiers (:mod:`.tiers`), spares
(:mod:`.spares`), failure scopes (:mod:`.scopes`) and the specs of its inputs (:mod:`.specs`). Data and their
rules, no formula and no simulation; imports only :mod:`..util`."""
