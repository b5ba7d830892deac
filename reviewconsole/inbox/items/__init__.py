"""The reviewer's items: who sees which, claims, decisions, expiry, refusals, answer reading,
queue assignment, the outbox consumer and its answer guard."""
