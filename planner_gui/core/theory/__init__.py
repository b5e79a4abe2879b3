"""The theory layer: closed forms and expectations of docs/model.md, the checkpoint intervals' optima
(:mod:`.exact`, :mod:`.tiers`, :mod:`.params`), failure rates and their posteriors (:mod:`.rates`), rate profiles
and renewal functions (:mod:`.profiles`, :mod:`.renewal`), expected counts (:mod:`.expected`), and the closed forms
of spares, racks and bad nodes. Imports only the model and util layers."""
