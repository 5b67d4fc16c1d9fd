"""Qt-free experiments: workload specs, the embedded load agent, sweep strategies, statistics."""
