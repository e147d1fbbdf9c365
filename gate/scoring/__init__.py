"""Scoring: severity-weighted stage scores, renormalised overall score, verdict. Pure."""

from gate.scoring.score import cell_credit, decide, overall_score, score_stages, stage_score

__all__ = ["cell_credit", "decide", "overall_score", "score_stages", "stage_score"]
