//! Move reconstruction: sensed placements over time -> moves, takebacks, illegal placements.
