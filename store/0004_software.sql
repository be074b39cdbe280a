-- The software a sweep measured with: the probe's answer ("jax 0.4.31, jaxlib 0.4.31") and
-- the jaxlib version alone, so `best` can warn when the installed jaxlib differs.
ALTER TABLE sweeps ADD COLUMN software TEXT;
ALTER TABLE sweeps ADD COLUMN jaxlib TEXT;
