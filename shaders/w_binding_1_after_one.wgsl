// The second weight library of a two-shard variant binds after a first that uses one binding (W).
const W_BINDING_1 = 4u;
