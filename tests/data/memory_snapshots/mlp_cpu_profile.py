"""The CPU profile snapshot of tests/data/memory_snapshots (PROVENANCE.md)."""
import pickle, sys
import torch
from torch.cuda import _memory_viz

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10))
optimizer = torch.optim.Adam(model.parameters())
with torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True) as prof:
    for _ in range(3):
        x = torch.randn(64, 256)
        loss = torch.nn.functional.cross_entropy(model(x), torch.randint(0, 10, (64,)))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
snapshot = _memory_viz._profile_to_snapshot(prof)
with open(sys.argv[1], "wb") as f:
    pickle.dump(snapshot, f)
