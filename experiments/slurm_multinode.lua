-- Multi-node trials on a Slurm cluster (docs/SLURM.md): each trial is one JAX multi-process
-- job across 2 nodes of 8 GPUs, started the way JAX starts on Slurm: `srun -N2
-- --ntasks-per-node=8 --gres=gpu:8`, one process per GPU, and jax.distributed.initialize()
-- in train_fsdp.py (your training script) reads the coordinator, process count and id from
-- SLURM_* variables. flagtune runs on the login node (or as the sbatch script) and holds one
-- allocation of parallel x 2 nodes for the night; every trial is a job step inside it.
-- Checked by tests/e2e/test_slurm.sh (`flagtune check`); a real run needs the cluster.
return experiment {
  name = "llama-fsdp-2x8",
  model = "llama2-7b",
  hardware = "2x8xH100",
  command = { "python3", "train_fsdp.py", "--steps", "{steps}" },
  env = { PYTHONUNBUFFERED = "1" },
  metric = { json = "step_time_ms", skip = 3, reduce = "median" },
  flags = {
    xla_gpu_enable_latency_hiding_scheduler = bool(),
    xla_gpu_all_gather_combine_threshold_bytes = pow2("64MiB", "2GiB"),
    xla_gpu_reduce_scatter_combine_threshold_bytes = pow2("64MiB", "2GiB"),
  },
  vars = { NCCL_PROTO = choice { "LL,LL128,Simple", "Simple" } },
  strategy = tpe { startup = 8 },
  budget = { trials = 40, steps = 30, hours = 8 },
  parallel = 2,            -- two 2-node trials at once: the allocation holds 4 nodes
  timeout = "20m",
  executor = slurm {
    partition = "gpu",
    time = "10:00:00",     -- the allocation's limit; trial timeouts stay flagtune's own
    nodes = 2,             -- nodes per trial
    tasks_per_node = 8,    -- one JAX process per GPU
    gpus_per_trial = 8,    -- --gres=gpu:8 on each node of a trial
    extra = { "--exclusive" },
  },
}
