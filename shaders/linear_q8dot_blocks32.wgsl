// The 8-bit bodies' block loader (linear_q8dot_partials.wgsl's q8_raw) for the formats whose weight
// library loads a row's 32-weight block as one chunk (q4_0, q8_0, q4_k: w_raw, WRaw).

alias Q8Raw = WRaw;

fn q8_raw(row: u32, c: u32) -> Q8Raw {
  return w_raw(row, c);
}
