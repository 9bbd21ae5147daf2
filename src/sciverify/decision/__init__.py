"""The decision: from what the models said about a claim's candidate abstracts to what is emitted, shown
and concluded.

* :mod:`~sciverify.decision.settings`: the settings record, shipped as ``decision/decision.toml``;
* :mod:`~sciverify.decision.grid`: the settings the cross-validation chooses among;
* :mod:`~sciverify.decision.candidates`: what the models said, the records the decision reads;
* :mod:`~sciverify.decision.sentence_rule` and :mod:`~sciverify.decision.rule`: the rule, which abstracts are
  emitted or shown with what label and listed sentences (each a :class:`~sciverify.decision.rule.Pick`);
* :mod:`~sciverify.decision.verdict`: the overall verdict over the shown abstracts and its 2:1 weighing.

It reads numbers and calls no model except the emit model, which is part of it; the Verifier, the
cross-validation and the calibrator all decide through it.
"""
