// The second weight library of a two-shard variant binds after a first that uses two (W, W_scales).
const W_BINDING_1 = 5u;
