// The second weight library of a two-matrix variant binds after a first that uses one binding (W).
const W_BINDING_1 = W_BINDING + 1u;
