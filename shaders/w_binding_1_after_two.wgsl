// The second weight library of a two-matrix variant binds after a first that uses two (W, W_scales).
const W_BINDING_1 = W_BINDING + 2u;
