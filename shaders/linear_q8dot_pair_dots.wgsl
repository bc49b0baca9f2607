// The 8-bit-activation bodies' partial sums over two matrices stacked by rows in one dispatch, each in
// its own format and buffer: rows 0..params.split−1 the first (its parts as joined), the rest the
// second (its parts joined again with their declarations suffixed _1: q8_partials_1, q8_raw_1, W_1, …
// at W_BINDING_1; variant-table.ts's LINEAR_PAIRS). Q4_K_M's Q|K (q4_k) beside V (q6_k): one
// dispatch where two would run. A row block never straddles the split (it is a multiple of ROW_BLOCK).
fn partial_dots(row0: u32, lane: u32, stride: u32) -> array<f32, MAX_PARTIALS> {
  if (row0 < params.split) { return q8_partials(row0, lane, stride, params.split - 1u); }
  return q8_partials_1(row0 - params.split, lane, stride, params.rows - params.split - 1u);
}
