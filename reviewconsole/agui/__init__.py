"""The AG-UI door: ``POST /agui/<workflow>/`` runs a workflow session as an AG-UI 1.0 event stream."""
