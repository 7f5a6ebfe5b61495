"""Trajectory judges (offline OCR judge, model judges), their evidence and the agreement audit."""
